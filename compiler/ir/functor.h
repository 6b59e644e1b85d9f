// Visitor and mutator bases over the IR.
//
// IRVisitor walks every child by default; override visit(const XNode*) for the nodes
// you care about and call the base to keep walking. IRMutator rebuilds a node only
// when a child changed, and otherwise returns the very same node (so same_as() tells
// a pass whether anything happened). Subclasses write `using IRMutator::visit;` (or
// IRVisitor) so that overriding one overload does not hide the others.
//
// Loop variables, let variables and block iteration variables are binding sites: the
// default walk does not visit or mutate them as expressions. Buffers are not walked
// either; a mutator that replaces buffers overrides mutate_buffer().
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);
  void visit(const PrimFunc& f);

 protected:
#define TEMPER_VISIT_DECL(n) virtual void visit(const n##Node* op);
  TEMPER_EXPR_NODES(TEMPER_VISIT_DECL)
  TEMPER_STMT_NODES(TEMPER_VISIT_DECL)
#undef TEMPER_VISIT_DECL

  // Visits every child expression and statement of op.
  template <typename T>
  void visit_children(const T* op);
  void visit_field(const Expr& e) { if (e.defined()) visit(e); }
  void visit_field(const Stmt& s) { if (s.defined()) visit(s); }
  void visit_field(const Var&) {}
  void visit_field(const Range& r) { visit_field(r.min); visit_field(r.extent); }
  void visit_field(const IterVar& iv) { visit_field(iv.dom); }
  void visit_field(const BufferRegion& r) { for (const Range& x : r.region) visit_field(x); }
  template <typename T>
  void visit_field(const std::vector<T>& v) { for (const T& x : v) visit_field(x); }
  template <typename T>
  void visit_field(const T&) {}
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);
  PrimFunc mutate(const PrimFunc& f);

 protected:
#define TEMPER_MUTATE_EXPR_DECL(n) virtual Expr visit(const n##Node* op, const Expr& self);
#define TEMPER_MUTATE_STMT_DECL(n) virtual Stmt visit(const n##Node* op, const Stmt& self);
  TEMPER_EXPR_NODES(TEMPER_MUTATE_EXPR_DECL)
  TEMPER_STMT_NODES(TEMPER_MUTATE_STMT_DECL)
#undef TEMPER_MUTATE_EXPR_DECL
#undef TEMPER_MUTATE_STMT_DECL

  // A buffer reference (in a load, store, region, allocation or parameter list).
  virtual Buffer mutate_buffer(const Buffer& b) { return b; }

  // Mutates every child of op; returns self when none changed, else a new node.
  template <typename T, typename Ref>
  Ref mutate_children(const T* op, const Ref& self);

 private:
  struct FieldMutator;
};

// Calls fn on every Expr and Stmt node reachable from root, children before parents.
void post_order_visit(const Stmt& root, const std::function<void(const Node*)>& fn);
void post_order_visit(const Expr& root, const std::function<void(const Node*)>& fn);

// ------------------------------------------------------------------ implementation

template <typename T>
void IRVisitor::visit_children(const T* op) {
  T::fields(*op, [this](const auto& field) { visit_field(field); });
}

struct IRMutator::FieldMutator {
  IRMutator* m;
  bool changed = false;

  void operator()(Expr& e) { update(e); }
  void operator()(Stmt& s) { update(s); }
  void operator()(Var&) {}
  void operator()(Buffer& b) {
    Buffer n = m->mutate_buffer(b);
    if (!n.same_as(b)) { changed = true; b = std::move(n); }
  }
  void operator()(Range& r) { update(r.min); update(r.extent); }
  void operator()(IterVar& iv) { (*this)(iv.dom); }
  void operator()(BufferRegion& r) {
    (*this)(r.buffer);
    for (Range& x : r.region) (*this)(x);
  }
  template <typename T>
  void operator()(std::vector<T>& v) { for (T& x : v) (*this)(x); }
  template <typename T>
  void operator()(T&) {}

  template <typename R>
  void update(R& r) {
    if (!r.defined()) return;
    R n = m->mutate(r);
    if (!n.same_as(r)) { changed = true; r = std::move(n); }
  }
};

template <typename T, typename Ref>
Ref IRMutator::mutate_children(const T* op, const Ref& self) {
  if constexpr (std::is_same_v<T, VarNode> || std::is_same_v<T, IntImmNode> || std::is_same_v<T, FloatImmNode>) {
    return self;  // leaves
  }
  auto copy = std::make_shared<T>(*op);
  FieldMutator fm{this};
  T::fields(*copy, fm);
  if (!fm.changed) return self;
  return Ref(std::shared_ptr<const typename Ref::NodeType>(std::move(copy)));
}

}  // namespace temper
