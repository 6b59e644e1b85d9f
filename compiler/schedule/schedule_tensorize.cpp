// tensorize: replaces a loop nest by a micro-kernel call (see tensor_intrin.h).
//
// The nest rooted at the loop must be a perfect nest with one loop per iteration
// variable of the intrinsic around one block whose variables are bound to
// `offset + loop` (one loop each) and whose update equals the intrinsic's, operand for
// operand and index for index. The nest becomes one block of the same name without
// iteration variables, whose reads and writes are the tiles the kernel touches and
// whose body is the call.
#include <map>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/schedule_ir.h"
#include "compiler/schedule/tensor_intrin.h"

namespace temper {

using namespace schedule_detail;

namespace {

// Compares a description statement with a scheduled one, pairing the description's
// variables and operands with the program's; records the first difference.
class IntrinMatcher {
 public:
  IntrinMatcher(const TensorIntrin& intrin, const BlockNode* block) {
    for (size_t k = 0; k < intrin.iter_vars.size(); ++k)
      vars_[intrin.iter_vars[k].var.get()] = block->iter_vars[k].var.get();
    for (const Buffer& b : intrin.operands) operands_.push_back(b);
    buffers_.resize(operands_.size());
  }

  bool match(const Stmt& desc, const Stmt& prog) {
    auto* d = desc.as<BufferStoreNode>();
    auto* p = prog.as<BufferStoreNode>();
    if (!d || !p) return fail(str("the block body is a ", node_kind_name(prog.kind()), ", not a single store"));
    return match_buffer(d->buffer, p->buffer) && match_indices(d->buffer, d->indices, p->indices) &&
           match(d->value, p->value);
  }

  const std::string& difference() const { return difference_; }
  // The program buffer paired with each description operand.
  const std::vector<Buffer>& buffers() const { return buffers_; }

 private:
  std::map<const VarNode*, const VarNode*> vars_;
  std::vector<Buffer> operands_;
  std::vector<Buffer> buffers_;
  std::string difference_;

  bool fail(std::string why) {
    if (difference_.empty()) difference_ = std::move(why);
    return false;
  }

  bool match_buffer(const Buffer& d, const Buffer& p) {
    for (size_t i = 0; i < operands_.size(); ++i) {
      if (!operands_[i].same_as(d)) continue;
      if (buffers_[i].defined() && !buffers_[i].same_as(p)) {
        return fail(str("operand ", d->name, " is ", buffers_[i]->name, " in one place and ", p->name, " in another"));
      }
      for (size_t j = 0; j < buffers_.size(); ++j) {
        if (j != i && buffers_[j].same_as(p)) {
          return fail(str("buffer ", p->name, " plays two operands (", operands_[j]->name, " and ", d->name, ")"));
        }
      }
      if (p->dtype != d->dtype || p.ndim() != d.ndim()) {
        return fail(str("operand ", d->name, " must be a ", d.ndim(), "-d ", d->dtype, " buffer, but ", p->name, " is ",
                        p.ndim(), "-d ", p->dtype));
      }
      buffers_[i] = p;
      return true;
    }
    TEMPER_CHECK(false, "description buffer ", d->name, " is not an operand");
    return false;
  }

  bool match_indices(const Buffer& d, const std::vector<Expr>& di, const std::vector<Expr>& pi) {
    for (size_t k = 0; k < di.size(); ++k) {
      if (!match(di[k], pi[k])) {
        return fail(str("index ", k, " of ", d->name, " is ", pi[k], " where the intrinsic has ", di[k]));
      }
    }
    return true;
  }

  bool match(const Expr& d, const Expr& p) {
    if (d.kind() != p.kind() || d.dtype() != p.dtype()) {
      return fail(str(p, " stands where the intrinsic has ", d));
    }
    if (auto* v = d.as<VarNode>()) {
      auto it = vars_.find(v);
      return it != vars_.end() && it->second == p.as<VarNode>();
    }
    if (auto* load = d.as<BufferLoadNode>()) {
      auto* pl = p.as<BufferLoadNode>();
      return match_buffer(load->buffer, pl->buffer) && match_indices(load->buffer, load->indices, pl->indices);
    }
    if (auto* c = d.as<CastNode>()) return match(c->value, p.as<CastNode>()->value);
    if (d.as<IntImmNode>() || d.as<FloatImmNode>()) {
      return structural_equal(d, p, /*map_vars=*/false) || fail(str(p, " is not ", d));
    }
    bool matched = false;
    bool binary = false;
    dispatch(d.get(), [&](const auto* dn) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(dn)>>;
      if constexpr (std::is_same_v<T, BinaryNode<T::kKind>>) {
        binary = true;
        auto* pn = static_cast<const T*>(p.get());
        matched = match(dn->a, pn->a) && match(dn->b, pn->b);
      }
    });
    if (!binary) return fail(str("the intrinsic's ", node_kind_name(d.kind()), " node cannot be matched"));
    return matched || fail(str(p, " differs from ", d));
  }
};

}  // namespace

void Schedule::tensorize(LoopRV loop_rv, const std::string& intrin_name) {
  LoopSite ls = find(loop_rv, "tensorize");
  const std::string& loop_name = ls.loop()->loop_var.name();
  const TensorIntrin* intrin = find_tensor_intrin(intrin_name);
  if (!intrin) {
    std::string names;
    for (const TensorIntrin& t : tensor_intrins()) names += (names.empty() ? "" : ", ") + t.name;
    throw ScheduleError(str("tensorize: no tensor intrinsic named '", intrin_name, "'; registered: ", names));
  }
  auto mismatch = [&](const std::string& why) {
    return ScheduleError(
        str("tensorize: the nest under loop ", loop_name, " does not match intrinsic ", intrin_name, ": ", why));
  };

  // A perfect nest around one block.
  std::vector<const ForNode*> loops;
  Stmt s = ls.stmt();
  while (auto* f = s.as<ForNode>()) {
    loops.push_back(f);
    s = f->body;
  }
  auto* br = s.as<BlockRealizeNode>();
  if (!br)
    throw mismatch(str("loop ", loops.back()->loop_var.name(), " holds ", node_kind_name(s.kind()),
                       " rather than exactly one loop or one block"));
  const BlockNode* b = br->block.as<BlockNode>();
  size_t n = intrin->iter_vars.size();
  if (loops.size() != n || b->iter_vars.size() != n) {
    throw mismatch(str(loops.size(), " loops around block ", b->name, " with ", b->iter_vars.size(),
                       " iteration variables, where the intrinsic has ", n, " of each"));
  }
  if (b->init.defined()) {
    throw mismatch(str("block ", b->name, " still has its init statement; apply decompose_reduction(", b->name,
                       ", loop) at a loop above ", loop_name, " first"));
  }
  if (!is_one(br->predicate)) {
    throw mismatch(str("block ", b->name, " has the predicate ", br->predicate,
                       " (a tail); split so that the tile divides the loop"));
  }

  // Each variable bound to offset + one inner loop whose extent fits the intrinsic.
  VarMap inner_at_zero;
  for (const ForNode* f : loops) {
    if (!is_zero(f->min)) throw mismatch(str("loop ", f->loop_var.name(), " does not start at 0"));
    inner_at_zero[f->loop_var.get()] = make_const(f->loop_var.dtype(), int64_t{0});
  }
  std::map<const VarNode*, Expr> wildcard;
  std::vector<Expr> extents;
  std::vector<bool> loop_used(n, false);
  VarMap origin_of;
  for (size_t k = 0; k < n; ++k) {
    const IterVar& iv = b->iter_vars[k];
    const IterVar& dv = intrin->iter_vars[k];
    if (iv.kind != dv.kind) {
      throw mismatch(str("variable ", iv.var.name(), " of block ", b->name, " is ",
                         iv.kind == IterKind::Spatial ? "spatial" : "a reduction", " where the intrinsic's ",
                         dv.var.name(), " is ", dv.kind == IterKind::Spatial ? "spatial" : "a reduction"));
    }
    Expr binding = br->iter_values[k];
    Expr offset = simplify(substitute(binding, inner_at_zero));
    int used = -1;
    int count = 0;
    for (size_t l = 0; l < n; ++l) {
      if (uses_var(binding, loops[l]->loop_var)) {
        used = static_cast<int>(l);
        ++count;
      }
    }
    if (count != 1 || loop_used[used] ||
        constant_difference(binding, offset + loops[used]->loop_var).value_or(1) != 0) {
      throw mismatch(str("variable ", iv.var.name(), " is bound to ", binding, ", not to one loop under ", loop_name,
                         " plus an offset"));
    }
    loop_used[used] = true;
    origin_of[iv.var.get()] = offset;
    const Expr& extent = loops[used]->extent;
    if (auto* w = dv.dom.extent.as<VarNode>()) {
      auto [it, fresh] = wildcard.emplace(w, extent);
      if (!fresh && constant_difference(it->second, extent).value_or(1) != 0) {
        throw mismatch(str("the extents ", it->second, " and ", extent, " must be equal"));
      }
    } else if (constant_difference(extent, dv.dom.extent).value_or(1) != 0) {
      throw mismatch(str("loop ", loops[used]->loop_var.name(), " (bound to ", iv.var.name(), ") has extent ", extent,
                         " where the intrinsic needs ", dv.dom.extent));
    }
    extents.push_back(extent);
  }

  IntrinMatcher matcher(*intrin, b);
  if (!matcher.match(intrin->body, b->body)) {
    throw mismatch(str("block ", b->name, " computes  ", to_string(b->body), "where the intrinsic computes  ",
                       to_string(intrin->body), "(", matcher.difference(), ")"));
  }

  // The tile of each operand: its origin, and its accessed region for the new block.
  TensorIntrinMatch m;
  m.extents = extents;
  m.buffers = matcher.buffers();
  VarMap bindings;
  for (size_t k = 0; k < n; ++k) bindings[b->iter_vars[k].var.get()] = br->iter_values[k];
  BlockNode tile;
  tile.name = b->name;
  tile.annotations = b->annotations;
  for (const Buffer& buf : m.buffers) {
    std::vector<std::vector<Expr>> stores = store_indices(b->body, buf);
    std::vector<std::vector<Expr>> loads = load_indices(b->body, buf);
    const std::vector<Expr>& indices = stores.empty() ? loads.front() : stores.front();
    std::vector<Expr> origin;
    BufferRegion region{buf, {}};
    for (const Expr& index : indices) {
      origin.push_back(simplify(substitute(index, origin_of)));
      std::optional<IndexBounds> r = bound_over_loops(substitute(index, bindings), loops);
      TEMPER_CHECK(r, "a matched index ", index, " has no bounds");
      region.region.push_back(Range{r->min, simplify(r->max - r->min + make_const(r->min.dtype(), int64_t{1}))});
    }
    m.origins.push_back(origin);
    if (!loads.empty()) tile.reads.push_back(region);
    if (!stores.empty()) tile.writes.push_back(region);
  }
  tile.body = intrin->implement(m);
  func_.body = replace_stmt(func_.body, ls.stmt(), realize({}, make_bool(true), tile));
  record(InstKind::Tensorize, {ref(loop_rv)}, nlohmann::json::array({intrin_name}), {});
}

}  // namespace temper
