#include "compiler/ir/functor.h"

namespace temper {

void IRVisitor::visit(const Expr& e) {
  dispatch(e.get(), [this](const auto* op) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
    if constexpr (std::is_base_of_v<ExprNode, T>) visit(op);
  });
}

void IRVisitor::visit(const Stmt& s) {
  dispatch(s.get(), [this](const auto* op) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
    if constexpr (std::is_base_of_v<StmtNode, T>) visit(op);
  });
}

void IRVisitor::visit(const PrimFunc& f) { visit(f.body); }

#define TEMPER_VISIT_DEF(n) \
  void IRVisitor::visit(const n##Node* op) { visit_children(op); }
TEMPER_EXPR_NODES(TEMPER_VISIT_DEF)
TEMPER_STMT_NODES(TEMPER_VISIT_DEF)
#undef TEMPER_VISIT_DEF

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  return dispatch(e.get(), [&](const auto* op) -> Expr {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
    if constexpr (std::is_base_of_v<ExprNode, T>) {
      return visit(op, e);
    } else {
      TEMPER_CHECK(false, "statement in expression position");
      return e;
    }
  });
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  return dispatch(s.get(), [&](const auto* op) -> Stmt {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
    if constexpr (std::is_base_of_v<StmtNode, T>) {
      return visit(op, s);
    } else {
      TEMPER_CHECK(false, "expression in statement position");
      return s;
    }
  });
}

PrimFunc IRMutator::mutate(const PrimFunc& f) {
  PrimFunc out = f;
  for (Buffer& b : out.params) b = mutate_buffer(b);
  out.body = mutate(f.body);
  return out;
}

#define TEMPER_MUTATE_EXPR_DEF(n) \
  Expr IRMutator::visit(const n##Node* op, const Expr& self) { return mutate_children(op, self); }
#define TEMPER_MUTATE_STMT_DEF(n) \
  Stmt IRMutator::visit(const n##Node* op, const Stmt& self) { return mutate_children(op, self); }
TEMPER_EXPR_NODES(TEMPER_MUTATE_EXPR_DEF)
TEMPER_STMT_NODES(TEMPER_MUTATE_STMT_DEF)
#undef TEMPER_MUTATE_EXPR_DEF
#undef TEMPER_MUTATE_STMT_DEF

namespace {
class PostOrderVisitor : public IRVisitor {
 public:
  explicit PostOrderVisitor(const std::function<void(const Node*)>& fn) : fn_(fn) {}
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    IRVisitor::visit(e);
    fn_(e.get());
  }
  void visit(const Stmt& s) override {
    IRVisitor::visit(s);
    fn_(s.get());
  }

 private:
  const std::function<void(const Node*)>& fn_;
};
}  // namespace

void post_order_visit(const Stmt& root, const std::function<void(const Node*)>& fn) {
  PostOrderVisitor v(fn);
  v.visit(root);
}
void post_order_visit(const Expr& root, const std::function<void(const Node*)>& fn) {
  PostOrderVisitor v(fn);
  v.visit(root);
}

}  // namespace temper
