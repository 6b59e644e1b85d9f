// Statement simplification: every expression simplified in the context of the loops,
// lets and branch conditions around it.
#include "compiler/ir/substitute.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

bool is_trivial(const Expr& value) {
  return value.as<IntImmNode>() || value.as<FloatImmNode>() || value.as<VarNode>();
}

class StmtSimplifier : public IRMutator {
 public:
  explicit StmtSimplifier(Analyzer& analyzer) : analyzer_(analyzer) {}
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override { return e.defined() ? analyzer_.simplify(e) : e; }

 protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Expr min = mutate(op->min);
    Expr extent = mutate(op->extent);
    const int64_t* n = as_const_int(extent);
    if (n && *n <= 0) return no_op();
    // A loop that runs once is its body; thread bindings and annotated loops carry
    // meaning beyond the iteration and stay.
    if (n && *n == 1 && op->for_kind != ForKind::ThreadBinding && op->annotations.empty()) {
      return mutate(substitute(op->body, {{op->loop_var.get(), min}}));
    }
    Stmt body;
    {
      Analyzer::Scope scope(analyzer_);
      analyzer_.bind(op->loop_var, Range{min, extent});
      body = mutate(op->body);
    }
    if (is_no_op(body)) return no_op();
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
    return make_for(op->loop_var, min, extent, op->for_kind, body, op->thread_tag, op->annotations);
  }

  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Expr cond = mutate(op->condition);
    if (is_one(cond)) return mutate(op->then_case);
    if (is_zero(cond)) return op->else_case.defined() ? mutate(op->else_case) : no_op();
    Stmt then_case;
    Stmt else_case;
    {
      Analyzer::Scope scope(analyzer_);
      analyzer_.assume(cond);
      then_case = mutate(op->then_case);
    }
    if (op->else_case.defined()) {
      Analyzer::Scope scope(analyzer_);
      analyzer_.assume(!cond);
      else_case = mutate(op->else_case);
      if (is_no_op(else_case)) else_case = Stmt();
    }
    if (is_no_op(then_case)) {
      if (!else_case.defined()) return no_op();
      return if_then_else(mutate(!cond), else_case);
    }
    if (cond.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) {
      return self;
    }
    return if_then_else(cond, then_case, else_case);
  }

  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr value = mutate(op->value);
    if (is_trivial(value)) return mutate(substitute(op->body, {{op->var.get(), value}}));
    analyzer_.bind(op->var, analyzer_.bounds(value));
    Stmt body = mutate(op->body);
    if (!uses_var(body, op->var)) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(op->var, value, body);
  }

  Stmt visit(const SeqStmtNode* op, const Stmt& self) override { return mutate_seq_without_no_ops(*this, op, self); }

  Stmt visit(const BlockNode* op, const Stmt& self) override {
    Analyzer::Scope scope(analyzer_);
    for (const IterVar& iv : op->iter_vars) analyzer_.bind(iv.var, iv.dom);
    return mutate_children(op, self);
  }

 private:
  Analyzer& analyzer_;
};

}  // namespace

Stmt Analyzer::simplify(const Stmt& s) {
  Scope scope(*this);
  return StmtSimplifier(*this).mutate(s);
}

}  // namespace temper
