// Extraction of the cost-model features (features.h): one walk of the lowered function
// collects loops, stores, accesses and allocations; reuse, copies, the annotation summary
// and the intensity curve are derived from what it collected.
#include "cost_model/features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "compiler/ir/functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/linear_sum.h"
#include "cost_model/feature_geometry.h"
#include "cost_model/feature_operations.h"

namespace temper::cost_model {

double StoreFeatures::total_ops() const {
  return float_add_sub + float_mul + float_fma + float_div + float_cmp_select + float_math + int_arith;
}

double StoreFeatures::float_ops() const {
  return float_add_sub + float_mul + 2 * float_fma + float_div + float_cmp_select + float_math;
}

double StoreFeatures::bytes_touched() const {
  double total = 0;
  for (const BufferAccessFeatures& a : accesses) total += a.bytes;
  return total;
}

namespace {

// How heavy a store is: operations plus bytes touched.
double work(const StoreFeatures& s) {
  return s.total_ops() + s.bytes_touched();
}

// The elements of buffer, or 0 when its shape is not constant.
double buffer_elements(const BufferNode& b) {
  double n = 1;
  for (const Expr& d : b.shape) {
    const int64_t* c = as_const_int(d);
    if (!c) return 0;
    n *= static_cast<double>(*c);
  }
  return n;
}

bool is_parallel(ForKind kind) {
  return kind == ForKind::Parallel || kind == ForKind::ThreadBinding;
}

struct Loop {
  const VarNode* var;
  int64_t extent;  // 1 when not constant
  ForKind kind;
  int64_t unroll_step;     // its "pragma_auto_unroll_max_step", 0 when none
  double outer_product;    // product of the extents of the loops around it and its own
  double bytes_under = 0;  // bytes all stores under it touch per call

  // Bytes the stores under the loop touch in one of its iterations.
  double bytes_per_iteration() const { return outer_product > 0 ? bytes_under / outer_product : 0; }
  // Executions of the loop per call: the product of the extents around it.
  double executions() const { return extent > 0 ? outer_product / static_cast<double>(extent) : 0; }
};

// One buffer access of a store, before accesses of the same buffer are merged.
struct Access {
  const BufferNode* buffer;
  Expr index;
  std::vector<AccessDim> dims;  // one per enclosing loop, then the vector lanes if any
  int num_loop_dims;
  // Loops above this depth are outside the buffer's Allocate: each of their iterations
  // gets a fresh buffer, so they carry no reuse.
  int scope_depth;
  double element_bytes;
  double bytes;
  int64_t stride;
  int location = -1;  // equal buffer and index, equal location
};

struct Store {
  std::vector<int> loops;        // enclosing loops, outermost first
  std::vector<Access> accesses;  // the stored buffer first, then the loads in post order
  int innermost_loop() const { return loops.empty() ? -1 : loops.back(); }
};

class Collector : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::vector<Loop> loops;
  std::vector<Store> stores;
  std::vector<StoreFeatures> rows;
  AllocationFeatures allocations;

 protected:
  void visit(const ForNode* op) override {
    const int64_t* extent = as_const_int(op->extent);
    auto unroll = op->annotations.find("pragma_auto_unroll_max_step");
    int64_t step = unroll != op->annotations.end() && std::holds_alternative<int64_t>(unroll->second)
                       ? std::get<int64_t>(unroll->second)
                       : 0;
    Loop loop{op->loop_var.get(), extent ? *extent : 1, op->for_kind, step, 1};
    loop.outer_product = (stack_.empty() ? 1.0 : loops[stack_.back()].outer_product) * static_cast<double>(loop.extent);
    loops.push_back(loop);
    stack_.push_back(static_cast<int>(loops.size()) - 1);
    visit(op->body);
    stack_.pop_back();
  }

  void visit(const AllocateNode* op) override {
    const double bytes = buffer_elements(*op->buffer.get()) * op->buffer->dtype.bytes();
    ++allocations.count;
    allocations.total_bytes += bytes;
    allocations.max_bytes = std::max(allocations.max_bytes, bytes);
    if (op->buffer->scope != "global") allocations.local_bytes += bytes;
    allocation_depth_[op->buffer.get()] = static_cast<int>(stack_.size());
    visit(op->body);
  }

  void visit(const BufferStoreNode* op) override {
    check_flat(op->buffer, op->indices.size());
    StoreFeatures row;
    row.buffer = op->buffer->name;
    row.num_loops = static_cast<int>(stack_.size());
    for (int i = 0; i < row.num_loops; ++i) {
      const Loop& l = loops[stack_[i]];
      row.loop_product *= static_cast<double>(l.extent);
      row.unroll_max_step = std::max(row.unroll_max_step, l.unroll_step);
      if (!is_parallel(l.kind)) continue;
      ++row.parallel_loops;
      row.parallel_extent *= static_cast<double>(l.extent);
      if (row.parallel_position == 0) row.parallel_position = i + 1;
    }
    if (!stack_.empty()) row.innermost_extent = loops[stack_.back()].extent;
    row.vector_lanes = op->value.dtype().lanes();

    count_operations(op->value, row);
    count_operations(op->indices[0], row);
    for (double* count : {&row.float_add_sub, &row.float_mul, &row.float_fma, &row.float_div, &row.float_cmp_select,
                          &row.float_math, &row.int_arith}) {
      *count *= row.loop_product;
    }

    Store store{stack_, {access(op->buffer, op->indices[0], row.loop_product)}};
    post_order_visit(op->value, [&](const Node* n) {
      if (n->kind != NodeKind::BufferLoad) return;
      auto* load = static_cast<const BufferLoadNode*>(n);
      check_flat(load->buffer, load->indices.size());
      store.accesses.push_back(access(load->buffer, load->indices[0], row.loop_product));
    });
    for (const Access& a : store.accesses) {
      for (int loop : stack_) loops[loop].bytes_under += a.bytes;
    }
    stores.push_back(std::move(store));
    rows.push_back(std::move(row));
  }

 private:
  static void check_flat(const Buffer& buffer, size_t num_indices) {
    if (num_indices == 1) return;
    throw UserError(str("cost-model features need lowered IR (flattened buffers), but ", buffer->name,
                        " is accessed with ", num_indices, " indices: pass the output of lower()"));
  }

  Access access(const Buffer& buffer, const Expr& index, double loop_product) const {
    Expr base = index;
    int lanes = 1;
    int64_t vector_stride = 0;
    if (auto* r = index.as<RampNode>()) {
      base = r->base;
      lanes = r->lanes;
      const int64_t* s = as_const_int(r->stride);
      vector_stride = s ? *s : 1;
    } else if (auto* b = index.as<BroadcastNode>()) {
      base = b->value;
      lanes = b->lanes;
    }
    std::set<const VarNode*> used;
    post_order_visit(base, [&](const Node* n) {
      if (n->kind == NodeKind::Var) used.insert(static_cast<const VarNode*>(n));
    });
    // Coefficients of loop variables that appear as plain linear terms.
    std::optional<LinearSum> sum = to_linear_sum(base);
    auto coefficient = [&](const VarNode* v) -> int64_t {
      if (!sum) return 0;
      for (const LinearSum::Term& t : sum->terms) {
        if (t.atom.get() == v) return t.coeff;
      }
      return 0;
    };

    auto allocated = allocation_depth_.find(buffer.get());
    const int scope_depth = allocated == allocation_depth_.end() ? 0 : allocated->second;
    Access a{buffer.get(), index, {}, static_cast<int>(stack_.size()), scope_depth, 0, 0, 0};
    for (int loop : stack_) {
      const Loop& l = loops[loop];
      a.dims.push_back({l.extent, coefficient(l.var), used.count(l.var) > 0});
    }
    if (lanes > 1) a.dims.push_back({lanes, vector_stride, vector_stride != 0});
    a.element_bytes = buffer->dtype.element_of().bytes();
    a.bytes = loop_product * lanes * a.element_bytes;
    if (lanes > 1) {
      a.stride = vector_stride;
    } else if (!stack_.empty()) {
      a.stride = a.dims.back().coeff;
    }
    return a;
  }

  // The loops around the current statement, outermost first.
  std::vector<int> stack_;
  // The number of loops around each Allocate.
  std::unordered_map<const BufferNode*, int> allocation_depth_;
};

// Numbers each access's location: equal buffers and structurally equal indices (over the
// same variables) share a number. Returns how many locations there are.
int number_locations(std::vector<Store>& stores) {
  std::unordered_map<size_t, std::vector<const Access*>> by_hash;
  int count = 0;
  for (Store& s : stores) {
    for (Access& a : s.accesses) {
      size_t h = structural_hash(a.index) ^ std::hash<const void*>()(a.buffer);
      std::vector<const Access*>& same_hash = by_hash[h];
      for (const Access* other : same_hash) {
        if (other->buffer == a.buffer && structural_equal(other->index, a.index, /*map_vars=*/false)) {
          a.location = other->location;
          break;
        }
      }
      if (a.location < 0) {
        a.location = count++;
        same_hash.push_back(&a);
      }
    }
  }
  return count;
}

BufferAccessFeatures access_features(const Access& a, const Store& store, const std::vector<Loop>& loops,
                                     const std::map<std::pair<int, int>, int>& serial_uses, double total_bytes) {
  BufferAccessFeatures f;
  f.buffer = a.buffer->name;
  f.bytes = a.bytes;
  Footprint unique = unique_footprint(a.dims, a.element_bytes, buffer_elements(*a.buffer));
  f.unique_bytes = unique.elements * a.element_bytes;
  f.unique_lines = unique.lines;
  f.lines = std::max(lines_touched(a.dims, a.element_bytes), unique.lines);
  f.stride = a.stride;

  int carrier = a.num_loop_dims - 1;
  while (carrier >= a.scope_depth && (a.dims[carrier].varies || a.dims[carrier].extent <= 1)) --carrier;
  if (carrier >= a.scope_depth) {
    f.reuse_kind = ReuseKind::Loop;
    f.reuse_distance_iters = 1;
    for (int i = carrier + 1; i < a.num_loop_dims; ++i) f.reuse_distance_iters *= static_cast<double>(a.dims[i].extent);
    const Loop& l = loops[store.loops[carrier]];
    f.reuse_distance_bytes = l.bytes_per_iteration();
    for (int i = a.scope_depth; i < a.num_loop_dims; ++i) {
      if (!a.dims[i].varies) f.reuse_count *= static_cast<double>(a.dims[i].extent);
    }
    return f;
  }
  const int uses = serial_uses.at({store.innermost_loop(), a.location});
  if (uses > 1) {
    f.reuse_kind = ReuseKind::Serial;
    f.reuse_count = uses;
    if (store.loops.empty()) {
      f.reuse_distance_bytes = total_bytes;
    } else {
      const Loop& l = loops[store.innermost_loop()];
      f.reuse_distance_bytes = l.bytes_per_iteration();
    }
  }
  return f;
}

int reuse_rank(ReuseKind k) {
  return k == ReuseKind::Loop ? 2 : k == ReuseKind::Serial ? 1 : 0;
}

// The accesses of one store merged per buffer (the stored buffer keeps its stride),
// heaviest first.
std::vector<BufferAccessFeatures> merged_accesses(const Store& store, const std::vector<Loop>& loops,
                                                  const std::map<std::pair<int, int>, int>& serial_uses,
                                                  double total_bytes) {
  std::vector<BufferAccessFeatures> merged;
  for (const Access& a : store.accesses) {
    BufferAccessFeatures f = access_features(a, store, loops, serial_uses, total_bytes);
    auto same = std::find_if(merged.begin(), merged.end(), [&](const auto& x) { return x.buffer == f.buffer; });
    if (same == merged.end()) {
      merged.push_back(std::move(f));
      continue;
    }
    same->bytes += f.bytes;
    same->lines += f.lines;
    same->unique_bytes = std::max(same->unique_bytes, f.unique_bytes);
    same->unique_lines = std::max(same->unique_lines, f.unique_lines);
    // The nearest, most used reuse of the buffer's accesses describes it.
    const int rank = reuse_rank(f.reuse_kind);
    const int same_rank = reuse_rank(same->reuse_kind);
    if (rank > same_rank || (rank == same_rank && f.reuse_count > same->reuse_count)) {
      same->reuse_kind = f.reuse_kind;
      same->reuse_count = f.reuse_count;
      same->reuse_distance_iters = f.reuse_distance_iters;
      same->reuse_distance_bytes = f.reuse_distance_bytes;
    }
  }
  std::stable_sort(merged.begin(), merged.end(), [](const auto& x, const auto& y) { return x.bytes > y.bytes; });
  return merged;
}

// Flops per unique byte of the stores under loops[region] (all stores when region is
// -1), in one execution of that loop; depth is the region's depth in the loop nest.
double intensity(const std::vector<Store>& stores, const std::vector<StoreFeatures>& rows,
                 const std::vector<Loop>& loops, int region, int depth, int num_locations) {
  double flops = 0;
  std::vector<bool> seen(num_locations, false);
  std::map<const BufferNode*, double> elements;  // per buffer, summed over locations
  for (size_t s = 0; s < stores.size(); ++s) {
    const Store& store = stores[s];
    if (region >= 0 && (static_cast<int>(store.loops.size()) <= depth || store.loops[depth] != region)) continue;
    flops += rows[s].float_ops();
    for (const Access& a : store.accesses) {
      if (seen[a.location]) continue;
      seen[a.location] = true;
      std::span<const AccessDim> inside(a.dims.begin() + (region >= 0 ? depth : 0), a.dims.end());
      elements[a.buffer] += unique_footprint(inside, a.element_bytes, 0).elements;
    }
  }
  double bytes = 0;
  for (const auto& [buffer, n] : elements) {
    const double size = buffer_elements(*buffer);
    bytes += (size > 0 ? std::min(n, size) : n) * buffer->dtype.element_of().bytes();
  }
  // Flops were counted per call: one execution of the region is one of its outer iterations.
  const double executions = region >= 0 ? loops[region].executions() : 1;
  return bytes > 0 && executions > 0 ? flops / executions / bytes : 0;
}

std::array<double, kCurvePoints> intensity_curve(const std::vector<Store>& stores,
                                                 const std::vector<StoreFeatures>& rows, const std::vector<Loop>& loops,
                                                 int heaviest, int num_locations) {
  std::array<double, kCurvePoints> curve{};
  const std::vector<int>& nest = stores[heaviest].loops;
  const double whole = intensity(stores, rows, loops, -1, 0, num_locations);
  for (int p = 0; p < kCurvePoints; ++p) {
    const int depth = static_cast<int>(nest.size()) - 1 - p;
    curve[p] = depth >= 0 ? intensity(stores, rows, loops, nest[depth], depth, num_locations) : whole;
  }
  return curve;
}

// The elements one access names in one statement instance: the lanes of a Ramp index,
// else one (a Broadcast reads one element).
double access_elements(const Access& a) {
  const bool vector = static_cast<int>(a.dims.size()) > a.num_loop_dims && a.dims.back().varies;
  return vector ? static_cast<double>(a.dims.back().extent) : 1.0;
}

InnerBodyFeatures inner_body_features(const std::vector<Store>& stores, const std::vector<StoreFeatures>& rows,
                                      const std::vector<Loop>& loops, int heaviest, int num_locations) {
  InnerBodyFeatures f;
  const int inner = stores[heaviest].innermost_loop();
  const double iterations = inner >= 0 ? loops[inner].outer_product : 1.0;
  std::vector<char> stored(num_locations, 0), seen(num_locations, 0);
  double carried = 0;
  for (size_t s = 0; s < stores.size(); ++s) {
    if (stores[s].innermost_loop() != inner) continue;
    f.flops += rows[s].float_ops() / iterations;
    const Access& out = stores[s].accesses.front();
    if (stored[out.location]) continue;
    stored[out.location] = 1;
    f.stored_elements += access_elements(out);
    if (inner >= 0 && !out.dims[out.num_loop_dims - 1].varies) carried += access_elements(out);
  }
  for (size_t s = 0; s < stores.size(); ++s) {
    if (stores[s].innermost_loop() != inner) continue;
    for (size_t i = 1; i < stores[s].accesses.size(); ++i) {
      const Access& a = stores[s].accesses[i];
      if (stored[a.location] || seen[a.location]) continue;
      seen[a.location] = 1;
      f.loaded_elements += access_elements(a);
    }
  }
  if (f.stored_elements > 0) f.carried_share = carried / f.stored_elements;
  const double moved = f.loaded_elements + f.stored_elements - carried;
  f.flops_per_element = moved > 0 ? f.flops / moved : 0;
  return f;
}

AnnotationFeatures annotation_features(const std::vector<StoreFeatures>& rows, const std::vector<Loop>& loops) {
  AnnotationFeatures f;
  for (const Loop& l : loops) {
    if (is_parallel(l.kind)) ++f.parallel_loops;
    f.unroll_max_step = std::max(f.unroll_max_step, l.unroll_step);
  }
  double total_work = 0;
  double parallel_work = 0;
  double vector_work = 0;
  for (const StoreFeatures& s : rows) {
    const double w = work(s);
    total_work += w;
    if (s.parallel_loops > 0) parallel_work += w;
    if (s.vector_lanes > 1) vector_work += w;
    f.parallel_extent = std::max(f.parallel_extent, s.parallel_extent);
    if (s.parallel_position > 0 && (f.parallel_position == 0 || s.parallel_position < f.parallel_position)) {
      f.parallel_position = s.parallel_position;
    }
    f.vector_lanes = std::max(f.vector_lanes, s.vector_lanes);
  }
  if (total_work > 0) {
    f.parallel_share = parallel_work / total_work;
    f.vector_share = vector_work / total_work;
  }
  return f;
}

// Groups copies (stores of one buffer directly in one innermost loop, with the same
// float operations and number of accesses: what unrolling leaves), sets each store's
// copies, and returns the heaviest store of each group (the first of equals), heaviest
// group first.
std::vector<int> heaviest_groups(const std::vector<Store>& stores, std::vector<StoreFeatures>& rows) {
  using Key = std::tuple<const BufferNode*, int, size_t, std::array<double, 6>>;
  std::map<Key, int> group_of;
  std::vector<std::vector<int>> members;
  for (size_t s = 0; s < stores.size(); ++s) {
    const StoreFeatures& r = rows[s];
    Key key{stores[s].accesses.front().buffer,
            stores[s].innermost_loop(),
            stores[s].accesses.size(),
            {r.float_add_sub, r.float_mul, r.float_fma, r.float_div, r.float_cmp_select, r.float_math}};
    auto [it, added] = group_of.try_emplace(key, static_cast<int>(members.size()));
    if (added) members.emplace_back();
    members[it->second].push_back(static_cast<int>(s));
  }
  std::vector<double> weight(members.size(), 0);
  std::vector<int> heaviest(members.size());
  for (size_t g = 0; g < members.size(); ++g) {
    heaviest[g] = members[g].front();
    for (int s : members[g]) {
      rows[s].copies = static_cast<int>(members[g].size());
      weight[g] += work(rows[s]);
      if (work(rows[s]) > work(rows[heaviest[g]])) heaviest[g] = s;
    }
  }
  std::vector<int> order(members.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = static_cast<int>(g);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return weight[x] > weight[y]; });
  std::vector<int> result;
  for (int g : order) result.push_back(heaviest[g]);
  return result;
}

}  // namespace

ProgramFeatures extract_program_features(const PrimFunc& lowered) {
  Collector collector;
  collector.visit(lowered.body);
  ProgramFeatures p;
  p.allocations = collector.allocations;
  std::vector<Store>& stores = collector.stores;
  const std::vector<Loop>& loops = collector.loops;
  const int num_locations = number_locations(stores);

  // Uses of each location directly in each innermost loop (-1: at top level).
  std::map<std::pair<int, int>, int> serial_uses;
  double total_bytes = 0;
  for (const Store& s : stores) {
    for (const Access& a : s.accesses) {
      ++serial_uses[{s.innermost_loop(), a.location}];
      total_bytes += a.bytes;
    }
  }
  p.stores = std::move(collector.rows);
  for (size_t s = 0; s < stores.size(); ++s) {
    p.stores[s].accesses = merged_accesses(stores[s], loops, serial_uses, total_bytes);
  }
  p.heaviest_stores = heaviest_groups(stores, p.stores);
  p.annotations = annotation_features(p.stores, loops);
  if (!stores.empty()) {
    p.intensity_curve = intensity_curve(stores, p.stores, loops, p.heaviest_stores.front(), num_locations);
    p.inner = inner_body_features(stores, p.stores, loops, p.heaviest_stores.front(), num_locations);
  }
  return p;
}

std::vector<StoreFeatures> extract_store_features(const PrimFunc& lowered) {
  return extract_program_features(lowered).stores;
}

}  // namespace temper::cost_model
