#include "compiler/lower/hoist_guards.h"

#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/ir_util.h"

namespace temper {
namespace {

// An `if` without else whose condition reads no buffer, or null.
const IfThenElseNode* pure_guard(const Stmt& s) {
  auto* i = s.as<IfThenElseNode>();
  return i && !i->else_case.defined() && !reads_buffer(i->condition) ? i : nullptr;
}

class GuardHoister : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> out;
    std::vector<Stmt> run;  // then-branches of the current run of one guard
    Expr run_cond;
    auto flush = [&] {
      if (run.empty()) return;
      out.push_back(if_then_else(run_cond, run.size() == 1 ? run[0] : seq(run)));
      run.clear();
    };
    bool changed = false;
    for (const Stmt& s0 : op->seq) {
      Stmt s = mutate(s0);
      changed = changed || !s.same_as(s0);
      const IfThenElseNode* g = pure_guard(s);
      if (g && !run.empty() && structural_equal(g->condition, run_cond, /*map_vars=*/false)) {
        run.push_back(g->then_case);
        changed = true;
        continue;
      }
      flush();
      if (g) {
        run_cond = g->condition;
        run.push_back(g->then_case);
      } else {
        out.push_back(s);
      }
    }
    flush();
    if (!changed) return self;
    return out.size() == 1 ? out[0] : seq(out);
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    if (op->for_kind == ForKind::ThreadBinding) return self;
    Stmt s = IRMutator::visit(op, self);
    auto* loop = s.as<ForNode>();
    const IfThenElseNode* g = pure_guard(loop->body);
    if (!g || uses_var(g->condition, loop->loop_var)) return s;
    return if_then_else(g->condition, make_for(loop->loop_var, loop->min, loop->extent, loop->for_kind, g->then_case,
                                               loop->thread_tag, loop->annotations));
  }
};

}  // namespace

PrimFunc hoist_guards(const PrimFunc& f) {
  return GuardHoister().mutate(f);
}

}  // namespace temper
