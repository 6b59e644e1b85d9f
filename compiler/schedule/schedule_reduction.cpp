// Reduction primitives: rfactor and decompose_reduction.
#include <functional>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/reduction_form.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/schedule_ir.h"

namespace temper {

using namespace schedule_detail;

namespace {

// Copies of b's spatial iteration variables (same names and domains) for a new block:
// appended to its iteration variables, copy k bound to binding(k) (k the original's
// position in b) in values. Returns the map from each original variable to its copy.
VarMap copy_spatial_vars(const BlockNode* b, BlockNode& copy, std::vector<Expr>& values,
                         const std::function<Expr(size_t)>& binding) {
  VarMap to_copy;
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    const IterVar& iv = b->iter_vars[k];
    if (iv.kind != IterKind::Spatial) continue;
    Var v(iv.var.name(), iv.var.dtype());
    copy.iter_vars.push_back(IterVar{v, iv.dom, IterKind::Spatial});
    values.push_back(binding(k));
    to_copy[iv.var.get()] = v;
  }
  return to_copy;
}

std::vector<Expr> insert_index(std::vector<Expr> indices, int axis, const Expr& index) {
  indices.insert(indices.begin() + axis, index);
  return indices;
}

}  // namespace

BlockRV Schedule::rfactor(LoopRV loop_rv, int factor_axis) {
  LoopSite ls = find(loop_rv, "rfactor");
  const ForNode* rf_loop = ls.loop();
  const std::string& loop_name = rf_loop->loop_var.name();
  std::vector<BlockSite> inside = collect_blocks(ls.stmt());
  if (inside.size() != 1) {
    throw ScheduleError(str("rfactor: loop ", loop_name, " encloses ", inside.size(),
                            " blocks; rfactor needs a loop over one reduction block"));
  }
  BlockSite bs = *find_block(func_.body, inside[0].block()->name);
  const BlockNode* b = bs.block();
  const BlockRealizeNode* br = bs.realize();
  auto form = match_reduction(b);
  if (!form || b->writes.size() != 1) {
    throw ScheduleError(str("rfactor: block ", b->name,
                            " is not a reduction of the form  init: X[...] = identity;  X[...] = X[...] op expr "
                            "(op one of +, *, max, min)"));
  }
  if (!is_one(br->predicate)) {
    throw ScheduleError(str("rfactor: block ", b->name, " has the predicate ", br->predicate,
                            " (a split with a tail); rfactor needs loops split without a tail"));
  }
  if (!as_const_int(rf_loop->extent)) {
    throw ScheduleError(str("rfactor: loop ", loop_name, " has a non-constant extent ", rf_loop->extent));
  }
  // Each loop binds spatial variables, reduction variables, or neither.
  std::vector<const ForNode*> loops = bs.loops();
  std::unordered_set<const VarNode*> spatial_loops;
  std::unordered_set<const VarNode*> reduce_loops;
  for (const ForNode* l : loops) {
    bool in_spatial = false;
    bool in_reduce = false;
    for (size_t k = 0; k < b->iter_vars.size(); ++k) {
      if (!uses_var(br->iter_values[k], l->loop_var)) continue;
      (b->iter_vars[k].kind == IterKind::Spatial ? in_spatial : in_reduce) = true;
    }
    if (in_spatial && in_reduce) {
      throw ScheduleError(str("rfactor: loop ", l->loop_var.name(), " binds both spatial and reduction variables of ",
                              "block ", b->name, "; rfactor cannot separate them"));
    }
    if (in_spatial) spatial_loops.insert(l->loop_var.get());
    if (in_reduce) reduce_loops.insert(l->loop_var.get());
  }
  if (spatial_loops.count(rf_loop->loop_var.get())) {
    throw ScheduleError(str("rfactor: loop ", loop_name, " binds a spatial variable of block ", b->name,
                            "; rfactor needs a loop that binds only reduction variables"));
  }
  if (!reduce_loops.count(rf_loop->loop_var.get())) {
    throw ScheduleError(str("rfactor: loop ", loop_name, " binds no reduction variable of block ", b->name));
  }
  const Buffer& buf = form->buf;
  int ndim = buf.ndim();
  if (factor_axis < -ndim - 1 || factor_axis > ndim) {
    throw ScheduleError(str("rfactor: factor_axis ", factor_axis, " is out of range for the ", ndim,
                            "-dimensional output ", buf->name, "; use 0..", ndim));
  }
  int axis = factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis;
  Stmt top = top_level_stmt(func_.body, bs.stmt());
  for (const BlockSite& other : collect_blocks(top)) {
    const BlockNode* ob = other.block();
    if (ob->name != b->name && (reads_buffer(ob, buf) || writes_buffer(ob, buf))) {
      throw ScheduleError(str("rfactor: block ", ob->name, " uses ", buf->name, " in the same loop nest as block ",
                              b->name, "; apply rfactor before compute_at/reverse_compute_at"));
    }
  }

  std::vector<Expr> rf_shape = buf->shape;
  rf_shape.insert(rf_shape.begin() + axis, rf_loop->extent);
  Buffer rf_buf = buf.with_name(buf->name + "_rf").with_shape(rf_shape);

  // The rfactor block: the original spatial variables, then one variable per reduction
  // loop (the rfactor loop's one spatial), the original reduction variables rewritten
  // in terms of those.
  BlockNode rf;
  rf.name = unique_block_name(func_.body, b->name + "_rf");
  std::vector<Expr> rf_values;
  VarMap to_rf = copy_spatial_vars(b, rf, rf_values, [&](size_t k) { return br->iter_values[k]; });
  VarMap loop_to_rf;
  Var rf_var;
  for (const ForNode* l : loops) {
    if (!reduce_loops.count(l->loop_var.get())) continue;
    bool is_rf = l == rf_loop;
    Var v("v" + l->loop_var.name(), l->loop_var.dtype());
    rf.iter_vars.push_back(IterVar{v, Range{l->min, l->extent}, is_rf ? IterKind::Spatial : IterKind::Reduce});
    rf_values.push_back(l->loop_var);
    loop_to_rf[l->loop_var.get()] = v;
    if (is_rf) rf_var = v;
  }
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    if (b->iter_vars[k].kind == IterKind::Reduce) {
      to_rf[b->iter_vars[k].var.get()] = simplify(substitute(br->iter_values[k], loop_to_rf));
    }
  }
  std::vector<Expr> rf_index = form->indices;
  for (Expr& e : rf_index) e = substitute(e, to_rf);
  rf_index = insert_index(rf_index, axis, rf_var);
  rf.init = store(rf_buf, form->identity, rf_index);
  rf.body = store(rf_buf, reduce_combine(form->op, load(rf_buf, rf_index), substitute(form->rhs, to_rf)), rf_index);
  rf.reads = load_regions(rf.body);
  rf.writes = store_regions(rf.body);
  Stmt rf_realize = realize(rf_values, make_bool(true), rf);

  // The write-back block reduces the partial results over the rfactor axis, in copies
  // of the spatial loops and the rfactor loop.
  BlockNode wb;
  wb.name = b->name;
  wb.annotations = b->annotations;
  std::vector<LoopSpec> wb_loops;
  VarMap loop_copy;
  for (const ForNode* l : loops) {
    if (!spatial_loops.count(l->loop_var.get()) && l != rf_loop) continue;
    Var c(l->loop_var.name(), l->loop_var.dtype());
    wb_loops.push_back(LoopSpec{c, l->extent, l->min});
    loop_copy[l->loop_var.get()] = c;
  }
  std::vector<Expr> wb_values;
  VarMap to_wb = copy_spatial_vars(b, wb, wb_values,
                                   [&](size_t k) { return simplify(substitute(br->iter_values[k], loop_copy)); });
  Var r("v" + loop_name, rf_loop->loop_var.dtype());
  wb.iter_vars.push_back(IterVar{r, Range{rf_loop->min, rf_loop->extent}, IterKind::Reduce});
  wb_values.push_back(loop_copy.at(rf_loop->loop_var.get()));
  std::vector<Expr> wb_index = form->indices;
  for (Expr& e : wb_index) e = substitute(e, to_wb);
  wb.init = store(buf, form->identity, wb_index);
  wb.body = store(buf, reduce_combine(form->op, load(buf, wb_index), load(rf_buf, insert_index(wb_index, axis, r))),
                  wb_index);
  wb.reads = load_regions(wb.body);
  wb.writes = store_regions(wb.body);
  Stmt wb_nest = make_loop_nest(wb_loops, realize(wb_values, make_bool(true), wb));

  Stmt body = replace_stmt(func_.body, bs.stmt(), rf_realize);
  body = insert_beside(body, top_level_stmt(body, rf_realize), wb_nest, /*after=*/true);
  func_.body = add_allocation(body, rf_buf);
  BlockRV out = new_block_rv(rf.name);
  record(InstKind::RFactor, {ref(loop_rv)}, nlohmann::json::array({factor_axis}), {ref(out)});
  return out;
}

BlockRV Schedule::decompose_reduction(BlockRV block_rv, LoopRV loop_rv) {
  BlockSite bs = find(block_rv, "decompose_reduction");
  LoopSite ls = find(loop_rv, "decompose_reduction");
  const BlockNode* b = bs.block();
  const BlockRealizeNode* br = bs.realize();
  const std::string& loop_name = ls.loop()->loop_var.name();
  if (!b->init.defined()) {
    throw ScheduleError(str("decompose_reduction: block ", b->name,
                            " has no init statement (it is not a reduction, or it was decomposed already)"));
  }
  std::vector<const ForNode*> loops = bs.loops();
  size_t at = loops.size();
  for (size_t i = 0; i < loops.size(); ++i) {
    if (loops[i] == ls.loop()) at = i;
  }
  if (at == loops.size()) {
    throw ScheduleError(str("decompose_reduction: loop ", loop_name, " is not an ancestor of block ", b->name));
  }
  auto binds = [&](const ForNode* l, IterKind kind) {
    for (size_t k = 0; k < b->iter_vars.size(); ++k) {
      if (b->iter_vars[k].kind == kind && uses_var(br->iter_values[k], l->loop_var)) return true;
    }
    return false;
  };
  for (size_t i = 0; i < at; ++i) {
    if (binds(loops[i], IterKind::Reduce)) {
      throw ScheduleError(str("decompose_reduction: loop ", loops[i]->loop_var.name(), " above loop ", loop_name,
                              " binds a reduction variable of block ", b->name,
                              "; the init would rerun in every iteration of it. Decompose at a loop outside all "
                              "reduction loops"));
    }
  }
  // Copies of the loops from `loop` down that bind spatial variables.
  std::vector<const ForNode*> kept;
  VarMap loop_copy;
  std::unordered_set<const VarNode*> dropped;
  for (size_t i = at; i < loops.size(); ++i) {
    bool spatial = binds(loops[i], IterKind::Spatial);
    if (spatial && binds(loops[i], IterKind::Reduce)) {
      throw ScheduleError(str("decompose_reduction: loop ", loops[i]->loop_var.name(),
                              " binds both spatial and reduction variables of block ", b->name));
    }
    if (spatial) {
      kept.push_back(loops[i]);
      loop_copy[loops[i]->loop_var.get()] = Var(loops[i]->loop_var.name() + "_init", loops[i]->loop_var.dtype());
    } else {
      dropped.insert(loops[i]->loop_var.get());
    }
  }
  if (uses_var_if(br->predicate, [&](const VarNode* v) { return dropped.count(v) > 0; })) {
    throw ScheduleError(str("decompose_reduction: the predicate ", br->predicate, " of block ", b->name,
                            " depends on a reduction loop; split the reduction loops without a tail"));
  }
  BlockNode init;
  init.name = unique_block_name(func_.body, b->name + "_init");
  std::vector<Expr> values;
  VarMap to_init =
      copy_spatial_vars(b, init, values, [&](size_t k) { return simplify(substitute(br->iter_values[k], loop_copy)); });
  init.body = substitute(b->init, to_init);
  init.reads = load_regions(init.body);
  init.writes = store_regions(init.body);
  Stmt nest = realize(values, simplify(substitute(br->predicate, loop_copy)), init);
  for (size_t i = kept.size(); i-- > 0;) {
    const ForNode* l = kept[i];
    Var c = Var(std::static_pointer_cast<const VarNode>(loop_copy.at(l->loop_var.get()).shared()));
    nest = make_for(c, l->min, l->extent, l->for_kind, nest, l->thread_tag);
  }

  BlockNode nb = *b;
  nb.init = Stmt();
  Stmt body = replace_stmt(func_.body, bs.stmt(), realize(br->iter_values, br->predicate, nb));
  func_.body = insert_beside(body, find_loop(body, ls.loop()->loop_var.get())->stmt(), nest, /*after=*/false);
  BlockRV out = new_block_rv(init.name);
  record(InstKind::DecomposeReduction, {ref(block_rv), ref(loop_rv)}, nlohmann::json::array(), {ref(out)});
  return out;
}

}  // namespace temper
