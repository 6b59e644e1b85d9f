#include "compiler/ir/substitute.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"

namespace temper {
namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::visit;

  Expr visit(const VarNode* op, const Expr& self) override {
    auto it = map_.find(op);
    if (it == map_.end()) return self;
    TEMPER_CHECK(it->second.dtype() == op->dtype, "substituting ", it->second, " of type ", it->second.dtype(), " for ",
                 self, " of type ", op->dtype);
    return it->second;
  }

 private:
  const VarMap& map_;
};

// Stops at the first use found: a throwaway exception would be heavier than the flag.
class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  using IRVisitor::visit;
  bool found = false;

  void visit(const Expr& e) override {
    if (!found) IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (!found) IRVisitor::visit(s);
  }
  void visit(const VarNode* op) override {
    if (pred_(op)) found = true;
  }

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

bool uses_var_if(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.visit(e);
  return f.found;
}
bool uses_var_if(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.visit(s);
  return f.found;
}
bool uses_var(const Expr& e, const Var& v) {
  return uses_var_if(e, [&](const VarNode* n) { return n == v.get(); });
}
bool uses_var(const Stmt& s, const Var& v) {
  return uses_var_if(s, [&](const VarNode* n) { return n == v.get(); });
}

}  // namespace temper
