// Replacing variables by expressions, and asking which variables an IR tree uses.
//
// substitute() replaces every use of a mapped variable by its expression, which must
// have the variable's type (a pass that changes types, like vectorize_loops, rebuilds
// the nodes itself). Binding sites (loop, let and block variables) are not renamed:
// Temper's variables are unique objects, so a substituted variable is never rebound
// inside the tree.
#pragma once

#include <functional>
#include <unordered_map>

#include "compiler/ir/ir.h"

namespace temper {

using VarMap = std::unordered_map<const VarNode*, Expr>;

Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

// Whether e (or s) reads a variable for which pred holds.
bool uses_var_if(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool uses_var_if(const Stmt& s, const std::function<bool(const VarNode*)>& pred);
bool uses_var(const Expr& e, const Var& v);
bool uses_var(const Stmt& s, const Var& v);

}  // namespace temper
