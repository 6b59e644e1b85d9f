// The layout of the candidate vector (documented in features.h): feature_names() and
// candidate_features(), which writes ProgramFeatures into it.
#include <cmath>
#include <string>

#include "cost_model/features.h"

namespace temper::cost_model {

namespace {

float log_scale(double x) {
  return static_cast<float>(x < 0 ? -std::log2(1 - x) : std::log2(1 + x));
}

constexpr int kTotals = 12;
constexpr int kAnnotations = 7;
constexpr int kAllocations = 4;
constexpr int kStoreScalars = 16;
constexpr int kBufferFields = 10;
constexpr int kStoreSlotSize = kStoreScalars + kBufferSlots * kBufferFields;
constexpr int kInnerBody = 5;
constexpr int kStoreSlotsStart = kTotals + kAnnotations + kAllocations + kCurvePoints + kInnerBody;

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* f :
         {"float_add_sub", "float_mul", "float_fma", "float_div", "float_cmp_select", "float_math", "int_arith",
          "bytes_touched", "unique_bytes", "lines_touched", "unique_lines", "num_stores"}) {
      n.push_back(std::string("total.") + f);
    }
    for (const char* f : {"parallel_loops", "parallel_extent", "parallel_position", "parallel_share", "vector_lanes",
                          "vector_share", "unroll_max_step"}) {
      n.push_back(std::string("annot.") + f);
    }
    for (const char* f : {"count", "total_bytes", "max_bytes", "local_bytes"}) n.push_back(std::string("alloc.") + f);
    for (int p = 0; p < kCurvePoints; ++p) n.push_back("intensity." + std::to_string(p));
    for (const char* f : {"flops", "stored_elements", "loaded_elements", "carried_share", "flops_per_element"}) {
      n.push_back(std::string("inner.") + f);
    }
    const char* store_fields[kStoreScalars] = {
        "float_add_sub",     "float_mul",        "float_fma",       "float_div",
        "float_cmp_select",  "float_math",       "int_arith",       "num_loops",
        "loop_product",      "innermost_extent", "parallel_loops",  "parallel_extent",
        "parallel_position", "vector_lanes",     "unroll_max_step", "copies"};
    const char* buffer_fields[kBufferFields] = {"bytes",
                                                "unique_bytes",
                                                "lines",
                                                "unique_lines",
                                                "stride",
                                                "reuse_loop",
                                                "reuse_serial",
                                                "reuse_distance_iters",
                                                "reuse_distance_bytes",
                                                "reuse_count"};
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
  const ProgramFeatures p = extract_program_features(lowered);
  std::vector<float> v(kStoreSlotsStart + kTopStores * kStoreSlotSize, 0.0f);

  double totals[kTotals] = {};
  for (const StoreFeatures& s : p.stores) {
    const double counts[7] = {s.float_add_sub,    s.float_mul,  s.float_fma, s.float_div,
                              s.float_cmp_select, s.float_math, s.int_arith};
    for (int i = 0; i < 7; ++i) totals[i] += counts[i];
    for (const BufferAccessFeatures& a : s.accesses) {
      totals[7] += a.bytes;
      totals[8] += a.unique_bytes;
      totals[9] += a.lines;
      totals[10] += a.unique_lines;
    }
  }
  totals[11] = static_cast<double>(p.stores.size());
  float* out = v.data();
  for (double t : totals) *out++ = log_scale(t);

  const AnnotationFeatures& an = p.annotations;
  *out++ = log_scale(an.parallel_loops);
  *out++ = log_scale(an.parallel_extent);
  *out++ = log_scale(an.parallel_position);
  *out++ = static_cast<float>(an.parallel_share);
  *out++ = log_scale(an.vector_lanes);
  *out++ = static_cast<float>(an.vector_share);
  *out++ = log_scale(static_cast<double>(an.unroll_max_step));

  const AllocationFeatures& al = p.allocations;
  for (double x : {static_cast<double>(al.count), al.total_bytes, al.max_bytes, al.local_bytes}) *out++ = log_scale(x);
  for (double x : p.intensity_curve) *out++ = log_scale(x);
  const InnerBodyFeatures& in = p.inner;
  *out++ = log_scale(in.flops);
  *out++ = log_scale(in.stored_elements);
  *out++ = log_scale(in.loaded_elements);
  *out++ = static_cast<float>(in.carried_share);
  *out++ = log_scale(in.flops_per_element);

  for (int slot = 0; slot < kTopStores && slot < static_cast<int>(p.heaviest_stores.size()); ++slot) {
    const StoreFeatures& s = p.stores[p.heaviest_stores[slot]];
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
                                           static_cast<double>(s.parallel_position),
                                           static_cast<double>(s.vector_lanes),
                                           static_cast<double>(s.unroll_max_step),
                                           static_cast<double>(s.copies)};
    out = v.data() + kStoreSlotsStart + slot * kStoreSlotSize;
    for (double x : scalars) *out++ = log_scale(x);
    for (int b = 0; b < kBufferSlots && b < static_cast<int>(s.accesses.size()); ++b) {
      const BufferAccessFeatures& a = s.accesses[b];
      const double fields[kBufferFields] = {a.bytes,
                                            a.unique_bytes,
                                            a.lines,
                                            a.unique_lines,
                                            static_cast<double>(a.stride),
                                            a.reuse_kind == ReuseKind::Loop ? 1.0 : 0.0,  // log_scale keeps 0 and 1
                                            a.reuse_kind == ReuseKind::Serial ? 1.0 : 0.0,
                                            a.reuse_distance_iters,
                                            a.reuse_distance_bytes,
                                            a.reuse_count};
      float* buf = out + b * kBufferFields;
      for (int i = 0; i < kBufferFields; ++i) buf[i] = log_scale(fields[i]);
    }
  }
  TEMPER_CHECK(v.size() == feature_names().size(), "feature layout and names disagree");
  return v;
}

}  // namespace temper::cost_model
