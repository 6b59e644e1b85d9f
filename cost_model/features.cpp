#include "cost_model/features.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>

#include "compiler/ir/functor.h"
#include "compiler/lower/linear_sum.h"

namespace temper::cost_model {

double StoreFeatures::total_ops() const {
  return float_add_sub + float_mul + float_fma + float_div + float_cmp_select + float_math + int_arith;
}

namespace {

struct Loop {
  const VarNode* var;
  int64_t extent;  // 1 when not constant
  ForKind kind;
};

bool is_float_node(const Node* n) {
  return static_cast<const ExprNode*>(n)->dtype.is_float();
}
int lanes_of(const Node* n) {
  return static_cast<const ExprNode*>(n)->dtype.lanes();
}

// The first operand of a binary node (Add, LT, And, ...), or nullptr for other nodes.
const Expr* binary_first_operand(const Node* n) {
  return dispatch(n, [](const auto* op) -> const Expr* {
    using T = std::decay_t<decltype(*op)>;
    if constexpr (requires { T::kKind; } && std::is_same_v<T, BinaryNode<T::kKind>>) {
      return &op->a;
    } else {
      return nullptr;
    }
  });
}

// Adds the operations of e, per element, into row (unweighted: the caller scales).
void count_operations(const Expr& e, StoreFeatures& row) {
  // A float a + b*c is one multiply-add: its Mul is not counted on its own.
  std::set<const Node*> fused_muls;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind != NodeKind::Add || !is_float_node(n)) return;
    auto* add = static_cast<const AddNode*>(n);
    if (add->b.as<MulNode>()) {
      fused_muls.insert(add->b.get());
    } else if (add->a.as<MulNode>()) {
      fused_muls.insert(add->a.get());
    }
  });
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Call) {
      if (static_cast<const CallNode*>(n)->call_kind == CallKind::Pure) row.float_math += lanes_of(n);
      return;
    }
    const Expr* first_operand = binary_first_operand(n);
    if (!first_operand && n->kind != NodeKind::Select) return;
    double lanes = lanes_of(n);
    // Comparisons are bool-typed: their operands say whether they compare floats.
    bool on_floats = is_comparison(n->kind) ? first_operand->dtype().is_float() : is_float_node(n);
    if (!on_floats) {
      if (n->kind != NodeKind::And && n->kind != NodeKind::Or) row.int_arith += lanes;
      return;
    }
    switch (n->kind) {
      case NodeKind::Add: {
        auto* add = static_cast<const AddNode*>(n);
        bool fused = fused_muls.count(add->a.get()) || fused_muls.count(add->b.get());
        (fused ? row.float_fma : row.float_add_sub) += lanes;
        break;
      }
      case NodeKind::Sub:
        row.float_add_sub += lanes;
        break;
      case NodeKind::Mul:
        if (!fused_muls.count(n)) row.float_mul += lanes;
        break;
      case NodeKind::Div:
      case NodeKind::Mod:
      case NodeKind::FloorDiv:
      case NodeKind::FloorMod:
        row.float_div += lanes;
        break;
      default:  // comparisons, Min, Max, Select
        row.float_cmp_select += lanes;
        break;
    }
  });
}

// The elements of buffer, or 0 when its shape is not constant.
double buffer_elements(const Buffer& b) {
  double n = 1;
  for (const Expr& d : b->shape) {
    const int64_t* c = as_const_int(d);
    if (!c) return 0;
    n *= static_cast<double>(*c);
  }
  return n;
}

BufferAccessFeatures access_features(const Buffer& buffer, const Expr& index, const std::vector<Loop>& loops,
                                     double loop_product) {
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

  BufferAccessFeatures a;
  a.buffer = buffer->name;
  const double element_bytes = buffer->dtype.element_of().bytes();
  a.bytes = loop_product * lanes * element_bytes;
  double footprint = vector_stride != 0 ? lanes : 1;
  for (const Loop& l : loops) {
    if (used.count(l.var)) footprint *= static_cast<double>(l.extent);
  }
  const double size = buffer_elements(buffer);
  if (size > 0) footprint = std::min(footprint, size);
  a.unique_bytes = footprint * element_bytes;
  if (lanes > 1) {
    a.stride = vector_stride;
  } else if (!loops.empty()) {
    a.stride = coefficient(loops.back().var);
  }
  return a;
}

class StoreCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::vector<StoreFeatures> rows;

 protected:
  void visit(const ForNode* op) override {
    const int64_t* extent = as_const_int(op->extent);
    loops_.push_back({op->loop_var.get(), extent ? *extent : 1, op->for_kind});
    auto unroll = op->annotations.find("pragma_auto_unroll_max_step");
    int64_t step = unroll != op->annotations.end() && std::holds_alternative<int64_t>(unroll->second)
                       ? std::get<int64_t>(unroll->second)
                       : 0;
    unroll_steps_.push_back(step);
    visit(op->body);
    unroll_steps_.pop_back();
    loops_.pop_back();
  }

  void visit(const BufferStoreNode* op) override {
    if (op->indices.size() != 1) {
      throw UserError(str("cost-model features need lowered IR (flattened buffers), but ", op->buffer->name,
                          " is stored with ", op->indices.size(), " indices: pass the output of lower()"));
    }
    StoreFeatures row;
    row.buffer = op->buffer->name;
    row.num_loops = static_cast<int>(loops_.size());
    for (const Loop& l : loops_) {
      row.loop_product *= static_cast<double>(l.extent);
      if (l.kind == ForKind::Parallel || l.kind == ForKind::ThreadBinding) {
        ++row.parallel_loops;
        row.parallel_extent *= static_cast<double>(l.extent);
      }
    }
    if (!loops_.empty()) row.innermost_extent = loops_.back().extent;
    row.vector_lanes = op->value.dtype().lanes();
    for (int64_t s : unroll_steps_) row.unroll_max_step = std::max(row.unroll_max_step, s);

    count_operations(op->value, row);
    count_operations(op->indices[0], row);
    for (double* count : {&row.float_add_sub, &row.float_mul, &row.float_fma, &row.float_div, &row.float_cmp_select,
                          &row.float_math, &row.int_arith}) {
      *count *= row.loop_product;
    }

    // The stored buffer first, so a buffer both read and written keeps the store's stride.
    std::vector<BufferAccessFeatures> accesses{access_features(op->buffer, op->indices[0], loops_, row.loop_product)};
    post_order_visit(op->value, [&](const Node* n) {
      if (n->kind != NodeKind::BufferLoad) return;
      auto* load = static_cast<const BufferLoadNode*>(n);
      BufferAccessFeatures a = access_features(load->buffer, load->indices[0], loops_, row.loop_product);
      auto same = std::find_if(accesses.begin(), accesses.end(), [&](const auto& x) { return x.buffer == a.buffer; });
      if (same == accesses.end()) {
        accesses.push_back(a);
      } else {
        same->bytes += a.bytes;
        same->unique_bytes = std::max(same->unique_bytes, a.unique_bytes);
      }
    });
    for (BufferAccessFeatures& a : accesses) a.reuse = a.unique_bytes > 0 ? a.bytes / a.unique_bytes : 0;
    std::stable_sort(accesses.begin(), accesses.end(), [](const auto& x, const auto& y) { return x.bytes > y.bytes; });
    row.accesses = std::move(accesses);
    rows.push_back(std::move(row));
  }

 private:
  std::vector<Loop> loops_;
  std::vector<int64_t> unroll_steps_;
};

float log_scale(double x) {
  return static_cast<float>(x < 0 ? -std::log2(1 - x) : std::log2(1 + x));
}

constexpr int kTotals = 10;
constexpr int kStoreScalars = 14;
constexpr int kBufferFields = 4;
constexpr int kStoreSlotSize = kStoreScalars + kBufferSlots * kBufferFields;

double bytes_touched(const StoreFeatures& s) {
  double total = 0;
  for (const BufferAccessFeatures& a : s.accesses) total += a.bytes;
  return total;
}

}  // namespace

std::vector<StoreFeatures> extract_store_features(const PrimFunc& lowered) {
  StoreCollector collector;
  collector.visit(lowered.body);
  return std::move(collector.rows);
}

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "total.float_add_sub", "total.float_mul", "total.float_fma",     "total.float_div",    "total.float_cmp_select",
        "total.float_math",    "total.int_arith", "total.bytes_touched", "total.unique_bytes", "total.num_stores"};
    const char* store_fields[kStoreScalars] = {
        "float_add_sub",  "float_mul",       "float_fma",    "float_div",      "float_cmp_select",
        "float_math",     "int_arith",       "num_loops",    "loop_product",   "innermost_extent",
        "parallel_loops", "parallel_extent", "vector_lanes", "unroll_max_step"};
    const char* buffer_fields[kBufferFields] = {"bytes", "unique_bytes", "stride", "reuse"};
    for (int s = 0; s < kTopStores; ++s) {
      std::string store = "store" + std::to_string(s) + ".";
      for (const char* f : store_fields) n.push_back(store + f);
      for (int b = 0; b < kBufferSlots; ++b) {
        for (const char* f : buffer_fields) n.push_back(store + "buf" + std::to_string(b) + "." + f);
      }
    }
    return n;
  }();
  return names;
}

std::vector<float> candidate_features(const PrimFunc& lowered) {
  std::vector<StoreFeatures> rows = extract_store_features(lowered);
  std::vector<float> v(kTotals + kTopStores * kStoreSlotSize, 0.0f);

  double totals[kTotals] = {};
  for (const StoreFeatures& s : rows) {
    const double counts[7] = {s.float_add_sub,    s.float_mul,  s.float_fma, s.float_div,
                              s.float_cmp_select, s.float_math, s.int_arith};
    for (int i = 0; i < 7; ++i) totals[i] += counts[i];
    totals[7] += bytes_touched(s);
    for (const BufferAccessFeatures& a : s.accesses) totals[8] += a.unique_bytes;
  }
  totals[9] = static_cast<double>(rows.size());
  for (int i = 0; i < kTotals; ++i) v[i] = log_scale(totals[i]);

  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return rows[x].total_ops() + bytes_touched(rows[x]) > rows[y].total_ops() + bytes_touched(rows[y]);
  });
  for (int slot = 0; slot < kTopStores && slot < static_cast<int>(order.size()); ++slot) {
    const StoreFeatures& s = rows[order[slot]];
    const double scalars[kStoreScalars] = {s.float_add_sub,
                                           s.float_mul,
                                           s.float_fma,
                                           s.float_div,
                                           s.float_cmp_select,
                                           s.float_math,
                                           s.int_arith,
                                           static_cast<double>(s.num_loops),
                                           s.loop_product,
                                           static_cast<double>(s.innermost_extent),
                                           static_cast<double>(s.parallel_loops),
                                           s.parallel_extent,
                                           static_cast<double>(s.vector_lanes),
                                           static_cast<double>(s.unroll_max_step)};
    float* out = v.data() + kTotals + slot * kStoreSlotSize;
    for (int i = 0; i < kStoreScalars; ++i) out[i] = log_scale(scalars[i]);
    for (int b = 0; b < kBufferSlots && b < static_cast<int>(s.accesses.size()); ++b) {
      const BufferAccessFeatures& a = s.accesses[b];
      float* buf = out + kStoreScalars + b * kBufferFields;
      buf[0] = log_scale(a.bytes);
      buf[1] = log_scale(a.unique_bytes);
      buf[2] = log_scale(static_cast<double>(a.stride));
      buf[3] = log_scale(a.reuse);
    }
  }
  TEMPER_CHECK(v.size() == feature_names().size(), "feature layout and names disagree");
  return v;
}

}  // namespace temper::cost_model
