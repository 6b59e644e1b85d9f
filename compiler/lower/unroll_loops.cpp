#include "compiler/lower/unroll_loops.h"

#include <limits>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/ir_util.h"

namespace temper {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kUnbounded : r;
}
int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kUnbounded : r;
}

// How many times the innermost statements of s run.
int64_t step_count(const Stmt& s) {
  if (auto* loop = s.as<ForNode>()) {
    const int64_t* extent = as_const_int(loop->extent);
    return extent ? saturating_mul(std::max<int64_t>(*extent, 0), step_count(loop->body)) : kUnbounded;
  }
  if (auto* sq = s.as<SeqStmtNode>()) {
    int64_t n = 0;
    for (const Stmt& x : sq->seq) n = saturating_add(n, step_count(x));
    return n;
  }
  if (auto* i = s.as<IfThenElseNode>()) {
    return saturating_add(step_count(i->then_case), i->else_case.defined() ? step_count(i->else_case) : 0);
  }
  if (auto* l = s.as<LetStmtNode>()) return step_count(l->body);
  if (auto* a = s.as<AllocateNode>()) return step_count(a->body);
  return 1;
}

class LoopUnroller : public IRMutator {
 public:
  explicit LoopUnroller(std::string func_name) : func_name_(std::move(func_name)) {}
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    int64_t outer_limit = max_step_;
    Annotations annotations = op->annotations;
    if (auto it = annotations.find(kAutoUnrollMaxStep); it != annotations.end()) {
      if (auto* n = std::get_if<int64_t>(&it->second)) max_step_ = *n;
      annotations.erase(it);
    }
    int64_t limit = max_step_;  // applies to this loop and the loops inside it
    Stmt body = mutate(op->body);
    max_step_ = outer_limit;
    const int64_t* extent = as_const_int(op->extent);
    bool unroll = op->for_kind == ForKind::Unrolled ||
                  (op->for_kind == ForKind::Serial && extent && limit > 0 &&
                   step_count(make_for(op->loop_var, op->min, op->extent, op->for_kind, body)) <= limit);
    if (unroll && extent) return unrolled(op, body, *extent);
    ForKind kind = op->for_kind;
    if (kind == ForKind::Unrolled) {
      warn(str("unroll_loops: in ", func_name_, ", loop ", op->loop_var->name, " has the non-constant extent ",
               op->extent, " and cannot be unrolled; it stays a serial loop"));
      kind = ForKind::Serial;
    }
    if (body.same_as(op->body) && kind == op->for_kind && annotations.size() == op->annotations.size()) return self;
    return make_for(op->loop_var, op->min, op->extent, kind, body, op->thread_tag, annotations);
  }

 private:
  std::string func_name_;
  int64_t max_step_ = 0;  // from the innermost enclosing annotation; 0: none

  static Stmt unrolled(const ForNode* op, const Stmt& body, int64_t extent) {
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < extent; ++k) {
      const int64_t* min = as_const_int(op->min);
      Expr value = min ? make_const(op->loop_var.dtype(), *min + k) : op->min + make_const(op->loop_var.dtype(), k);
      copies.push_back(substitute(body, {{op->loop_var.get(), value}}));
    }
    if (copies.empty()) return no_op();
    return seq(copies);
  }
};

}  // namespace

PrimFunc unroll_loops(const PrimFunc& f) {
  return LoopUnroller(f.name).mutate(f);
}

}  // namespace temper
