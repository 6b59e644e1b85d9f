#include "compiler/lower/lower_cross_thread_reduction.h"

#include <functional>
#include <memory>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/reduction_form.h"
#include "compiler/ir/substitute.h"

namespace temper {
namespace {

bool is_thread_axis(const ForNode* loop) {
  return loop->for_kind == ForKind::ThreadBinding && loop->thread_tag.rfind("threadIdx", 0) == 0;
}

// Does the loop bind one of the block's variables of this kind?
bool binds(const BlockRealizeNode* realize, const ForNode* loop, IterKind kind) {
  auto* block = realize->block.as<BlockNode>();
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].kind == kind && uses_var(realize->iter_values[i], loop->loop_var)) return true;
  }
  return false;
}

class CrossThreadReductionLowerer : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    std::vector<const ForNode*> chain{op};
    Stmt inner = op->body;
    while (auto* loop = inner.as<ForNode>()) {
      chain.push_back(loop);
      inner = loop->body;
    }
    auto* realize = inner.as<BlockRealizeNode>();
    if (realize && binds(realize, op, IterKind::Reduce)) {
      for (const ForNode* loop : chain) {
        if (is_thread_axis(loop) && binds(realize, loop, IterKind::Reduce)) return rewrite(chain, realize);
      }
    }
    around_.push_back(op);
    Stmt out = IRMutator::visit(op, self);
    around_.pop_back();
    return out;
  }

  // A thread-bound reduction loop the rewrite did not take: its nest has another shape.
  Stmt visit(const BlockRealizeNode* op, const Stmt& self) override {
    for (const ForNode* loop : around_) {
      if (is_thread_axis(loop) && binds(op, loop, IterKind::Reduce)) {
        throw UserError(str("block ", op->block.as<BlockNode>()->name, " reduces across ", loop->thread_tag,
                            " (loop ", loop->loop_var.name(), "), but the loops from its outermost reduction loop ",
                            "down hold more than the block: keep its reduction loops innermost, with nothing but ",
                            "the block under them"));
      }
    }
    return IRMutator::visit(op, self);
  }

 private:
  std::vector<const ForNode*> around_;

  Stmt rewrite(const std::vector<const ForNode*>& chain, const BlockRealizeNode* realize) {
    auto* block = realize->block.as<BlockNode>();
    const std::string& name = block->name;
    std::optional<ReductionForm> form = match_reduction(block);
    if (!form) {
      throw UserError(str("block ", name, " reduces across GPU threads but is not of the form  init: X[...] = ",
                          "identity;  X[...] = X[...] op expr  (op one of +, *, max, min; keep the init in the block: ",
                          "do not decompose_reduction a cross-thread reduction)"));
    }
    for (const ForNode* loop : around_) {
      if (is_thread_axis(loop)) {
        throw UserError(str("block ", name, " reduces across threads inside loop ", loop->loop_var.name(),
                            ", bound to ", loop->thread_tag, "; a cross-thread reduction must be the only use of its ",
                            "block's threads: bind the spatial loops to blockIdx.*"));
      }
    }
    const ForNode* thread_loop = nullptr;
    for (const ForNode* loop : chain) {
      if (binds(realize, loop, IterKind::Spatial)) {
        throw UserError(str("loop ", loop->loop_var.name(), " lies between the reduction loops of block ", name,
                            " bound to threads and binds a spatial variable; reorder the spatial loops outside"));
      }
      if (!is_thread_axis(loop)) continue;
      if (thread_loop) {
        throw UserError(str("block ", name, " reduces across two thread axes (loops ", thread_loop->loop_var.name(),
                            " and ", loop->loop_var.name(), "); fuse them into one loop before binding it"));
      }
      thread_loop = loop;
    }
    const int64_t* threads = as_const_int(thread_loop->extent);
    if (!threads) {
      throw UserError(str("the reduction loop ", thread_loop->loop_var.name(), " of block ", name,
                          " is bound to threads with the extent '", thread_loop->extent, "'; it needs a constant"));
    }
    DataType t = form->buf->dtype;
    Buffer partial(name + "_partial", t, {Expr(1)}, "local");
    Buffer shared(name + "_threads", t, {Expr(*threads)}, "shared");

    // Each thread's share, into its partial result.
    auto updated = std::make_shared<BlockNode>(*block);
    updated->init = Stmt();
    updated->body = store(partial, reduce_combine(form->op, load(partial, {0}), form->rhs), {0});
    BufferRegion one{partial, {Range{0, 1}}};
    updated->writes = {one};
    updated->reads.clear();
    for (const BufferRegion& r : block->reads) {
      if (!r.buffer.same_as(form->buf)) updated->reads.push_back(r);
    }
    updated->reads.push_back(one);
    Stmt nest = block_realize(realize->iter_values, realize->predicate, updated);
    for (size_t i = chain.size(); i-- > 0;) {
      const ForNode* l = chain[i];
      nest = make_for(l->loop_var, l->min, l->extent, l->for_kind, nest, l->thread_tag, l->annotations);
    }

    // The partial results, combined pairwise in shared memory.
    auto over_threads = [&](const std::function<Stmt(const Var&)>& body) {
      Var v(thread_loop->loop_var.name() + "_r", thread_loop->loop_var.dtype());
      return make_for(v, make_const(v.dtype(), int64_t{0}), thread_loop->extent, ForKind::ThreadBinding, body(v),
                      thread_loop->thread_tag);
    };
    std::vector<Stmt> steps{store(partial, form->identity, {0}), nest,
                            over_threads([&](const Var& v) { return store(shared, load(partial, {0}), {v}); })};
    for (int64_t n = *threads; n > 1;) {
      int64_t half = (n + 1) / 2;
      Expr active = make_const(thread_loop->loop_var.dtype(), n - half);
      Expr offset = make_const(thread_loop->loop_var.dtype(), half);
      steps.push_back(over_threads([&](const Var& v) {
        Expr sum = reduce_combine(form->op, load(shared, {v}), load(shared, {v + offset}));
        return if_then_else(v < active, store(shared, sum, {v}));
      }));
      n = half;
    }
    VarMap bindings;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) bindings[block->iter_vars[i].var.get()] = realize->iter_values[i];
    std::vector<Expr> indices;
    for (const Expr& e : form->indices) indices.push_back(substitute(e, bindings));
    // Under the predicate's conditions on the spatial loops (a split's tail).
    std::unordered_set<const VarNode*> reduction_loops;
    for (const ForNode* l : chain) reduction_loops.insert(l->loop_var.get());
    Expr guard;
    std::function<void(const Expr&)> spatial_conditions = [&](const Expr& c) {
      if (auto* a = c.as<AndNode>()) {
        spatial_conditions(a->a);
        spatial_conditions(a->b);
      } else if (!uses_var_if(c, [&](const VarNode* v) { return reduction_loops.count(v) > 0; })) {
        guard = guard.defined() ? (guard && c) : c;
      }
    };
    if (!is_one(realize->predicate)) spatial_conditions(substitute(realize->predicate, bindings));
    Stmt result = store(form->buf, load(shared, {0}), indices);
    steps.push_back(guard.defined() ? if_then_else(guard, result) : result);
    return allocate(partial, allocate(shared, seq(steps)));
  }
};

}  // namespace

PrimFunc lower_cross_thread_reduction(const PrimFunc& f) {
  return CrossThreadReductionLowerer().mutate(f);
}

}  // namespace temper
