#include "compiler/lower/simplify.h"

#include "compiler/lower/analyzer.h"

namespace temper {

PrimFunc simplify(const PrimFunc& f) {
  Analyzer analyzer;
  // A symbolic dimension of a parameter is a positive extent.
  for (const Buffer& b : f.params) {
    for (const Expr& d : b->shape) {
      if (!d.as<VarNode>()) continue;
      analyzer.bind(Var(std::static_pointer_cast<const VarNode>(d.shared())), Interval{1, Interval::kPosInf});
    }
  }
  PrimFunc out = f;
  out.body = analyzer.simplify(f.body);
  return out;
}

}  // namespace temper
