#include "compiler/lower/lower_blocks.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/substitute.h"

namespace temper {
namespace {

class BlockLowerer : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const BlockRealizeNode* op, const Stmt& self) override {
    auto* block = op->block.as<BlockNode>();
    TEMPER_CHECK(block, "a BlockRealize without a Block");
    VarMap bindings;
    Expr first_iteration;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      bindings[iv.var.get()] = op->iter_values[i];
      if (iv.kind == IterKind::Reduce) {
        Expr is_first = iv.var == iv.dom.min;
        first_iteration = first_iteration.defined() ? (first_iteration && is_first) : is_first;
      }
    }
    // Nested blocks are lowered first, while their own bindings are still in sight.
    Stmt body = mutate(block->body);
    if (block->init.defined()) {
      Stmt init = mutate(block->init);
      // A reduction block without reduce variables initializes every time.
      body = seq({first_iteration.defined() ? if_then_else(first_iteration, init) : init, body});
    }
    for (size_t i = block->alloc_buffers.size(); i-- > 0;) body = allocate(block->alloc_buffers[i], body);
    body = substitute(body, bindings);
    if (!is_one(op->predicate)) body = if_then_else(op->predicate, body);
    return body;
  }
};

}  // namespace

PrimFunc lower_blocks(const PrimFunc& f) {
  return BlockLowerer().mutate(f);
}

}  // namespace temper
