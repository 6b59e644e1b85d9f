// Loop primitives: split, tile, fuse, reorder, loop kinds (parallel, vectorize, unroll,
// bind) and annotations.
#include <algorithm>
#include <set>
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

// Simplifies the bindings and predicates of every block under s (after a substitution).
class BindingSimplifier : public IRMutator {
 public:
  using IRMutator::visit;

 protected:
  Stmt visit(const BlockRealizeNode* op, const Stmt& self) override {
    std::vector<Expr> values;
    for (const Expr& v : op->iter_values) values.push_back(simplify(v));
    Stmt block = mutate(op->block);
    auto node = std::make_shared<BlockRealizeNode>(values, simplify(op->predicate), block);
    return Stmt(std::shared_ptr<const StmtNode>(std::move(node)));
  }
};

// Adds `condition` to the predicate of every block under s.
class PredicateAdder : public IRMutator {
 public:
  using IRMutator::visit;
  explicit PredicateAdder(Expr condition) : condition_(std::move(condition)) {}

 protected:
  Stmt visit(const BlockRealizeNode* op, const Stmt& self) override {
    Expr pred = is_one(op->predicate) ? condition_ : op->predicate && condition_;
    auto node = std::make_shared<BlockRealizeNode>(op->iter_values, pred, op->block);
    return Stmt(std::shared_ptr<const StmtNode>(std::move(node)));
  }

 private:
  Expr condition_;
};

Stmt substitute_loops(const Stmt& body, const VarMap& map) {
  BindingSimplifier s;
  return s.mutate(substitute(body, map));
}

void check_plain(const ForNode* f, const char* primitive) {
  if (f->for_kind != ForKind::Serial || !f->annotations.empty()) {
    std::string what = f->for_kind != ForKind::Serial ? str("is ", for_kind_name(f->for_kind)) : "has annotations";
    throw ScheduleError(str(primitive, ": loop ", f->loop_var.name(), " ", what, "; ", primitive,
                            " loops before giving them a kind or annotations"));
  }
}

// The first block under s, to name a statement in a message.
std::string describe(const Stmt& s) {
  if (auto* f = s.as<ForNode>()) return "loop " + f->loop_var.name();
  std::vector<BlockSite> blocks = collect_blocks(s);
  if (!blocks.empty()) return "block " + blocks.front().block()->name;
  return std::string("a ") + node_kind_name(s.kind()) + " statement";
}

}  // namespace

std::vector<LoopRV> Schedule::split(LoopRV loop_rv, const std::vector<SplitFactor>& factors, bool allow_tail) {
  LoopSite site = find(loop_rv, "split");
  const ForNode* f = site.loop();
  const std::string& name = f->loop_var.name();
  const int64_t* extent = as_const_int(f->extent);
  if (!extent) {
    throw ScheduleError(str("split: loop ", name, " has a non-constant extent ", f->extent,
                            "; only loops of constant extent can be split"));
  }
  if (factors.size() < 2) {
    throw ScheduleError(str("split: loop ", name, " needs at least two factors, got ", factors.size()));
  }
  check_plain(f, "split");
  std::vector<int64_t> values;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    int64_t v = factor_value(factors[i]);
    if (factors[i].is_inferred()) {
      if (inferred >= 0) {
        throw ScheduleError(str("split: loop ", name, " has two factors to infer (", inferred, " and ", i,
                                "); give all factors but one"));
      }
      inferred = static_cast<int>(i);
    } else if (v <= 0) {
      throw ScheduleError(str("split: factor ", i, " of loop ", name, " is ", v, "; split factors must be positive"));
    } else {
      known *= v;
    }
    values.push_back(v);
  }
  if (inferred >= 0) values[inferred] = (*extent + known - 1) / known;
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  std::string listed;
  for (int64_t v : values) listed += (listed.empty() ? "" : ", ") + std::to_string(v);
  if (product < *extent) {
    throw ScheduleError(str("split: factors [", listed, "] multiply to ", product, ", less than the extent ", *extent,
                            " of loop ", name, "; let one factor be inferred (std::nullopt)"));
  }
  bool tail = product != *extent;
  if (tail && !allow_tail) {
    throw ScheduleError(str("split: factors [", listed, "] do not divide the extent ", *extent, " of loop ", name,
                            " and a tail is not allowed; choose divisors of ", *extent));
  }

  DataType t = f->loop_var.dtype();
  std::vector<Var> vars;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string suffix = values.size() == 2 ? (i == 0 ? "_o" : "_i") : "_" + std::to_string(i);
    vars.emplace_back(name + suffix, t);
  }
  // i = i_0 * (f1 * f2 ...) + i_1 * (f2 ...) + ... + i_n-1
  Expr fused;
  int64_t stride = product;
  for (size_t i = 0; i < vars.size(); ++i) {
    stride /= values[i];
    Expr term = stride == 1 ? Expr(vars[i]) : vars[i] * make_const(t, stride);
    fused = fused.defined() ? fused + term : term;
  }
  Expr value = is_zero(f->min) ? fused : f->min + fused;
  Stmt body = substitute_loops(f->body, {{f->loop_var.get(), value}});
  if (tail) {
    PredicateAdder add(fused < make_const(t, *extent));
    body = add.mutate(body);
  }
  for (size_t i = vars.size(); i-- > 0;) {
    body = make_for(vars[i], make_const(t, int64_t{0}), make_const(t, values[i]), ForKind::Serial, body);
  }
  func_.body = replace_stmt(func_.body, site.stmt(), body);

  std::vector<InstInput> inputs{ref(loop_rv)};
  for (const SplitFactor& sf : factors) {
    if (auto* rv = std::get_if<ExprRV>(&sf.value())) {
      inputs.emplace_back(ref(*rv));
    } else if (auto* c = std::get_if<int64_t>(&sf.value())) {
      inputs.emplace_back(*c);
    } else {
      inputs.emplace_back(std::monostate{});
    }
  }
  std::vector<LoopRV> out;
  std::vector<RVRef> refs;
  for (const Var& v : vars) {
    out.push_back(new_loop_rv(v));
    refs.push_back(ref(out.back()));
  }
  record(InstKind::Split, inputs, nlohmann::json::array({allow_tail}), refs);
  return out;
}

std::vector<LoopRV> Schedule::tile(const std::vector<LoopRV>& loops, const std::vector<SplitFactor>& inner_factors) {
  if (loops.size() != inner_factors.size() || loops.empty()) {
    throw ScheduleError(str("tile: needs one inner factor per loop, got ", loops.size(), " loops and ",
                            inner_factors.size(), " factors"));
  }
  // tile is split + reorder; on an error the schedule goes back to where it was.
  Schedule before = *this;
  try {
    std::vector<LoopRV> outer;
    std::vector<LoopRV> inner;
    for (size_t i = 0; i < loops.size(); ++i) {
      std::vector<LoopRV> parts = split(loops[i], {std::nullopt, inner_factors[i]});
      outer.push_back(parts[0]);
      inner.push_back(parts[1]);
    }
    outer.insert(outer.end(), inner.begin(), inner.end());
    reorder(outer);
    return outer;
  } catch (...) {
    *this = std::move(before);
    throw;
  }
}

LoopRV Schedule::fuse(const std::vector<LoopRV>& loops) {
  if (loops.size() < 2) throw ScheduleError(str("fuse: needs at least two loops, got ", loops.size()));
  std::vector<LoopSite> sites;
  for (LoopRV l : loops) sites.push_back(find(l, "fuse"));
  for (size_t i = 0; i < sites.size(); ++i) {
    const ForNode* f = sites[i].loop();
    check_plain(f, "fuse");
    if (!is_zero(f->min)) {
      throw ScheduleError(
          str("fuse: loop ", f->loop_var.name(), " starts at ", f->min, "; only loops that start at 0 can be fused"));
    }
    if (i > 0 && !sites[i - 1].loop()->body.same_as(sites[i].stmt())) {
      throw ScheduleError(str("fuse: loop ", f->loop_var.name(), " is not the whole body of loop ",
                              sites[i - 1].loop()->loop_var.name(),
                              "; fuse adjacent loops of a perfect nest, given outermost first"));
    }
  }
  std::string name;
  DataType t = sites[0].loop()->loop_var.dtype();
  Expr extent = make_const(t, int64_t{1});
  for (const LoopSite& s : sites) {
    name += s.loop()->loop_var.name() + "_";
    extent = extent * s.loop()->extent;
  }
  extent = simplify(extent);
  Var fused(name + "fused", t);
  // Loop i of n: floormod(floordiv(fused, product of the extents inside it), its extent).
  VarMap map;
  Expr inner = make_const(t, int64_t{1});
  for (size_t i = sites.size(); i-- > 0;) {
    const ForNode* f = sites[i].loop();
    Expr v = floordiv(fused, inner);
    if (i > 0) v = floormod(v, f->extent);
    map[f->loop_var.get()] = simplify(v);
    inner = simplify(inner * f->extent);
  }
  Stmt body = substitute_loops(sites.back().loop()->body, map);
  Stmt loop = make_for(fused, make_const(t, int64_t{0}), extent, ForKind::Serial, body);
  func_.body = replace_stmt(func_.body, sites[0].stmt(), loop);
  LoopRV out = new_loop_rv(fused);
  std::vector<InstInput> inputs;
  for (LoopRV l : loops) inputs.emplace_back(ref(l));
  record(InstKind::Fuse, inputs, nlohmann::json::array(), {ref(out)});
  return out;
}

void Schedule::reorder(const std::vector<LoopRV>& order) {
  if (order.empty()) throw ScheduleError("reorder: needs at least one loop");
  std::vector<LoopSite> sites;
  std::set<const VarNode*> seen;
  for (LoopRV l : order) {
    sites.push_back(find(l, "reorder"));
    if (!seen.insert(sites.back().loop()->loop_var.get()).second) {
      throw ScheduleError(str("reorder: loop ", sites.back().loop()->loop_var.name(), " is given twice"));
    }
  }
  // The loops sorted outermost first must each enclose the next.
  std::vector<const LoopSite*> by_depth;
  for (const LoopSite& s : sites) by_depth.push_back(&s);
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [](const LoopSite* a, const LoopSite* b) { return a->path.size() < b->path.size(); });
  const LoopSite& top = *by_depth.front();
  const LoopSite& bottom = *by_depth.back();
  for (const LoopSite* s : by_depth) {
    size_t d = top.path.size() - 1;
    if (s->path.size() <= d || !s->path[d].same_as(top.stmt()) || !bottom.path[s->path.size() - 1].same_as(s->stmt())) {
      throw ScheduleError(str("reorder: loops ", top.loop()->loop_var.name(), " and ", s->loop()->loop_var.name(),
                              " are not nested one in the other; reorder loops of one loop nest"));
    }
  }
  // The chain from top to bottom must be a perfect nest.
  std::vector<const ForNode*> chain;
  for (size_t d = top.path.size() - 1; d < bottom.path.size(); ++d) {
    const ForNode* f = bottom.path[d].as<ForNode>();
    if (!f) {
      const ForNode* above = chain.back();
      std::string other;
      for (const Stmt& c : bottom.path[d].as<SeqStmtNode>() ? bottom.path[d].as<SeqStmtNode>()->seq
                                                            : std::vector<Stmt>{bottom.path[d]}) {
        if (!c.same_as(bottom.path[d + 1])) {
          other = describe(c);
          break;
        }
      }
      throw ScheduleError(str("reorder across a non-perfect nest: the body of loop ", above->loop_var.name(), " holds ",
                              other,
                              " beside the loops to reorder; reorder only loops of one perfect "
                              "nest (or compute_at/decompose_reduction after reordering)"));
    }
    chain.push_back(f);
  }
  std::unordered_set<const VarNode*> chain_vars;
  for (const ForNode* f : chain) chain_vars.insert(f->loop_var.get());
  auto in_chain = [&](const VarNode* v) { return chain_vars.count(v) > 0; };
  for (const ForNode* f : chain) {
    if (uses_var_if(f->min, in_chain) || uses_var_if(f->extent, in_chain)) {
      throw ScheduleError(str("reorder: the range of loop ", f->loop_var.name(),
                              " depends on another loop of the nest; such loops cannot be reordered"));
    }
  }
  // Slots of the named loops in the chain take the named loops in the given order.
  std::vector<const ForNode*> reordered = chain;
  size_t next = 0;
  for (const ForNode*& slot : reordered) {
    if (seen.count(slot->loop_var.get())) slot = sites[next++].loop();
  }
  Stmt body = chain.back()->body;
  for (size_t i = reordered.size(); i-- > 0;) {
    const ForNode* f = reordered[i];
    body = make_for(f->loop_var, f->min, f->extent, f->for_kind, body, f->thread_tag, f->annotations);
  }
  func_.body = replace_stmt(func_.body, top.stmt(), body);
  std::vector<InstInput> inputs;
  for (LoopRV l : order) inputs.emplace_back(ref(l));
  record(InstKind::Reorder, inputs, nlohmann::json::array(), {});
}

void Schedule::set_loop_kind(LoopRV loop_rv, ForKind kind, const std::string& thread_tag, InstKind inst,
                             const char* primitive) {
  LoopSite site = find(loop_rv, primitive);
  const ForNode* f = site.loop();
  if (kind == ForKind::Vectorized && !as_const_int(f->extent)) {
    throw ScheduleError(str("vectorize: loop ", f->loop_var.name(), " has a non-constant extent ", f->extent,
                            "; only loops of constant extent can be vectorized"));
  }
  if (kind != ForKind::Unrolled) {
    for (const BlockSite& b : collect_blocks(site.stmt())) {
      const BlockNode* block = b.block();
      for (size_t i = 0; i < block->iter_vars.size(); ++i) {
        const IterVar& iv = block->iter_vars[i];
        if (iv.kind != IterKind::Reduce || !uses_var(b.realize()->iter_values[i], f->loop_var)) continue;
        // The threads of a block can combine their partial results (lower_cross_thread_reduction).
        bool cross_thread = kind == ForKind::ThreadBinding && thread_tag.rfind("threadIdx", 0) == 0;
        if (cross_thread && match_reduction(block)) continue;
        std::string what = str(primitive, ": loop ", f->loop_var.name(), " binds the reduction variable ",
                               iv.var.name(), " of block ", block->name);
        if (cross_thread) {
          throw ScheduleError(str(what, ", which is not a reduction of the form  init: X[...] = identity;  ",
                                  "X[...] = X[...] op expr (op one of +, *, max, min); only such a reduction can be ",
                                  "spread over threads"));
        }
        throw ScheduleError(str(what, "; cannot ", primitive, " a reduction loop (its iterations update the same ",
                                "element): ", primitive, " a spatial loop, or rfactor the reduction first",
                                kind == ForKind::ThreadBinding ? " (or bind it to threadIdx.*)" : ""));
      }
    }
  }
  Stmt loop = make_for(f->loop_var, f->min, f->extent, kind, f->body, thread_tag, f->annotations);
  func_.body = replace_stmt(func_.body, site.stmt(), loop);
  nlohmann::json attrs = nlohmann::json::array();
  if (inst == InstKind::Bind) attrs.push_back(thread_tag);
  record(inst, {ref(loop_rv)}, attrs, {});
}

void Schedule::parallel(LoopRV loop) {
  set_loop_kind(loop, ForKind::Parallel, "", InstKind::Parallel, "parallel");
}
void Schedule::vectorize(LoopRV loop) {
  set_loop_kind(loop, ForKind::Vectorized, "", InstKind::Vectorize, "vectorize");
}
void Schedule::unroll(LoopRV loop) {
  set_loop_kind(loop, ForKind::Unrolled, "", InstKind::Unroll, "unroll");
}

void Schedule::bind(LoopRV loop, const std::string& thread_tag) {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                              "threadIdx.y", "threadIdx.z", "vthread"};
  if (!kTags.count(thread_tag)) {
    throw ScheduleError(
        str("bind: unknown thread axis '", thread_tag, "'; use blockIdx.x/y/z, threadIdx.x/y/z or vthread"));
  }
  set_loop_kind(loop, ForKind::ThreadBinding, thread_tag, InstKind::Bind, "bind");
}

void Schedule::annotate_impl(InstInput target, const std::string& key, const AnnotationValue& value,
                             std::optional<ExprRV> from) {
  if (key.empty()) throw ScheduleError("annotate: the annotation key is empty");
  const RVRef& r = std::get<RVRef>(target);
  if (r.kind == RVRef::Kind::Loop) {
    LoopSite site = find(LoopRV{r.id}, "annotate");
    const ForNode* f = site.loop();
    Annotations ann = f->annotations;
    ann[key] = value;
    Stmt loop = make_for(f->loop_var, f->min, f->extent, f->for_kind, f->body, f->thread_tag, ann);
    func_.body = replace_stmt(func_.body, site.stmt(), loop);
  } else {
    BlockSite site = find(BlockRV{r.id}, "annotate");
    BlockNode block = *site.block();
    block.annotations[key] = value;
    const BlockRealizeNode* br = site.realize();
    func_.body = replace_stmt(func_.body, site.stmt(), realize(br->iter_values, br->predicate, block));
  }
  std::vector<InstInput> inputs{target};
  nlohmann::json attrs = nlohmann::json::array({key});
  if (from) {
    inputs.emplace_back(ref(*from));
  } else if (auto* i = std::get_if<int64_t>(&value)) {
    attrs.push_back(*i);
  } else {
    attrs.push_back(std::get<std::string>(value));
  }
  record(InstKind::Annotate, inputs, attrs, {});
}

void Schedule::annotate(LoopRV loop, const std::string& key, const AnnotationValue& value) {
  annotate_impl(ref(loop), key, value, std::nullopt);
}
void Schedule::annotate(LoopRV loop, const std::string& key, ExprRV value) {
  annotate_impl(ref(loop), key, get(value), value);
}
void Schedule::annotate(BlockRV block, const std::string& key, const AnnotationValue& value) {
  annotate_impl(ref(block), key, value, std::nullopt);
}
void Schedule::annotate(BlockRV block, const std::string& key, ExprRV value) {
  annotate_impl(ref(block), key, get(value), value);
}

}  // namespace temper
