#include "benchmarks/baselines.h"

#include <cblas.h>
#include <dnnl.h>
#include <dnnl_debug.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace temper::bench {

void onednn_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  dnnl_status_t s = dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  if (s != dnnl_success) throw std::runtime_error("dnnl_sgemm failed with status " + std::to_string(s));
}

void openblas_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

void eigen_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> a(A, M, K);
  Eigen::Map<const RowMajor> b(B, K, N);
  Eigen::Map<RowMajor> c(C, M, N);
  c.noalias() = a * b;
}

namespace {

void check_dnnl(dnnl_status_t status, const char* what) {
  if (status != dnnl_success) {
    throw std::runtime_error(std::string(what) + " failed with status " + std::to_string(status));
  }
}

// A layout in oneDNN's notation, dimensions named by `letters` ("nchw", "oihw"): outer
// dimensions by decreasing stride, upper case when also blocked, then the inner blocks
// ("nChw8c", "OIhw8i8o").
std::string layout_name(const dnnl_memory_desc_t& md, const char* letters) {
  if (md.format_kind != dnnl_blocked) return dnnl_fmt_kind2str(md.format_kind);
  const dnnl_blocking_desc_t& b = md.format_desc.blocking;
  std::vector<int> order(md.ndims);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (int d : order) {
    bool blocked = std::find(b.inner_idxs, b.inner_idxs + b.inner_nblks, d) != b.inner_idxs + b.inner_nblks;
    name += blocked ? static_cast<char>(std::toupper(letters[d])) : letters[d];
  }
  for (int i = 0; i < b.inner_nblks; ++i) name += std::to_string(b.inner_blks[i]) + letters[b.inner_idxs[i]];
  return name;
}

// What every oneDNN baseline holds: a CPU engine and stream, one primitive built from an
// op descriptor with a user-managed scratchpad (every allocation stays out of the timed
// calls), and that scratchpad; released in reverse order.
struct OnednnPrimitive {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t scratchpad = nullptr;

  OnednnPrimitive() {
    check_dnnl(dnnl_engine_create(&engine, dnnl_cpu, 0), "dnnl_engine_create");
    check_dnnl(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "dnnl_stream_create");
  }
  ~OnednnPrimitive() {
    if (scratchpad) dnnl_memory_destroy(scratchpad);
    if (primitive) dnnl_primitive_destroy(primitive);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (stream) dnnl_stream_destroy(stream);
    if (engine) dnnl_engine_destroy(engine);
  }
  OnednnPrimitive(const OnednnPrimitive&) = delete;
  OnednnPrimitive& operator=(const OnednnPrimitive&) = delete;

  void create(const_dnnl_op_desc_t desc, const char* what) {
    dnnl_primitive_attr_t attr;
    check_dnnl(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
    check_dnnl(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user), "scratchpad mode");
    dnnl_status_t created = dnnl_primitive_desc_create(&pd, desc, attr, engine, nullptr);
    dnnl_primitive_attr_destroy(attr);
    check_dnnl(created, (std::string("dnnl_primitive_desc_create (") + what + ")").c_str());
    check_dnnl(dnnl_primitive_create(&primitive, pd), "dnnl_primitive_create");
    const dnnl_memory_desc_t* scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (scratch_md && dnnl_memory_desc_get_size(scratch_md) > 0) {
      check_dnnl(dnnl_memory_create(&scratchpad, scratch_md, engine, DNNL_MEMORY_ALLOCATE), "scratchpad memory");
    }
  }

  // Runs the primitive on args (the scratchpad added) and waits for it.
  void execute(std::vector<dnnl_exec_arg_t> args, const char* what) {
    if (scratchpad) args.push_back({DNNL_ARG_SCRATCHPAD, scratchpad});
    check_dnnl(dnnl_primitive_execute(primitive, stream, static_cast<int>(args.size()), args.data()),
               (std::string("dnnl_primitive_execute (") + what + ")").c_str());
    check_dnnl(dnnl_stream_wait(stream), "dnnl_stream_wait");
  }

  std::string implementation() const {
    const char* name = nullptr;
    check_dnnl(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name), "impl info");
    return name ? name : "?";
  }
};

}  // namespace

struct OnednnConv2d::State : OnednnPrimitive {
  OnednnConvLayout layout;
  // What the primitive runs on: the caller's arrays (Plain) or its own buffers (Blocked).
  dnnl_memory_t src = nullptr, weights = nullptr, dst = nullptr;
  // Blocked only: the caller's plain arrays, reordered from and to the buffers above.
  dnnl_memory_t user_src = nullptr, user_weights = nullptr, user_dst = nullptr;

  void reorder(dnnl_memory_t from, dnnl_memory_t to) {
    const dnnl_memory_desc_t *from_md, *to_md;
    check_dnnl(dnnl_memory_get_memory_desc(from, &from_md), "reorder source desc");
    check_dnnl(dnnl_memory_get_memory_desc(to, &to_md), "reorder destination desc");
    dnnl_primitive_desc_t reorder_pd;
    check_dnnl(dnnl_reorder_primitive_desc_create(&reorder_pd, from_md, engine, to_md, engine, nullptr),
               "dnnl_reorder_primitive_desc_create");
    dnnl_primitive_t reorder;
    dnnl_status_t created = dnnl_primitive_create(&reorder, reorder_pd);
    dnnl_primitive_desc_destroy(reorder_pd);
    check_dnnl(created, "dnnl_primitive_create (reorder)");
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    dnnl_status_t executed = dnnl_primitive_execute(reorder, stream, 2, args);
    if (executed == dnnl_success) executed = dnnl_stream_wait(stream);
    dnnl_primitive_destroy(reorder);
    check_dnnl(executed, "dnnl_primitive_execute (reorder)");
  }
};

OnednnConv2d::OnednnConv2d(const ConvShape& c, OnednnConvLayout layout) : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.layout = layout;
  dnnl_dims_t src_dims = {c.N, c.C, c.H, c.W};
  // Grouped: [groups, K/groups, C/groups, R, S], the same bytes as Temper's [K, C/groups, R, S].
  int weight_ndims = c.groups > 1 ? 5 : 4;
  dnnl_dims_t weight_dims = {c.K, c.C, c.R, c.S};
  if (c.groups > 1) {
    dnnl_dims_t grouped = {c.groups, c.K / c.groups, c.C / c.groups, c.R, c.S};
    std::copy(grouped, grouped + 5, weight_dims);
  }
  dnnl_dims_t dst_dims = {c.N, c.K, c.P(), c.Q()};
  dnnl_dims_t strides = {c.stride_h, c.stride_w};
  dnnl_dims_t pad_l = {c.pad_top, c.pad_left};
  dnnl_dims_t pad_r = {c.pad_bottom, c.pad_right};
  dnnl_memory_desc_t src_md, weight_md, dst_md;
  check_dnnl(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_nchw), "src memory desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&weight_md, weight_ndims, weight_dims, dnnl_f32,
                                          c.groups > 1 ? dnnl_goihw : dnnl_oihw),
             "weight memory desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dnnl_nchw), "dst memory desc");
  // Blocked: oneDNN picks the layouts along with the implementation.
  dnnl_memory_desc_t any_src_md, any_weight_md, any_dst_md;
  check_dnnl(dnnl_memory_desc_init_by_tag(&any_src_md, 4, src_dims, dnnl_f32, dnnl_format_tag_any), "src desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&any_weight_md, weight_ndims, weight_dims, dnnl_f32, dnnl_format_tag_any),
             "weight desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&any_dst_md, 4, dst_dims, dnnl_f32, dnnl_format_tag_any), "dst desc");
  bool blocked = layout == OnednnConvLayout::Blocked;
  dnnl_convolution_desc_t desc;
  check_dnnl(dnnl_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                blocked ? &any_src_md : &src_md, blocked ? &any_weight_md : &weight_md,
                                                nullptr, blocked ? &any_dst_md : &dst_md, strides, pad_l, pad_r),
             "dnnl_convolution_forward_desc_init");
  st.create(&desc, "convolution");
  if (blocked) {
    const dnnl_memory_desc_t* chosen_src = dnnl_primitive_desc_query_md(st.pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t* chosen_weights = dnnl_primitive_desc_query_md(st.pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t* chosen_dst = dnnl_primitive_desc_query_md(st.pd, dnnl_query_dst_md, 0);
    check_dnnl(dnnl_memory_create(&st.src, chosen_src, st.engine, DNNL_MEMORY_ALLOCATE), "blocked src memory");
    check_dnnl(dnnl_memory_create(&st.weights, chosen_weights, st.engine, DNNL_MEMORY_ALLOCATE),
               "blocked weight memory");
    check_dnnl(dnnl_memory_create(&st.dst, chosen_dst, st.engine, DNNL_MEMORY_ALLOCATE), "blocked dst memory");
    check_dnnl(dnnl_memory_create(&st.user_src, &src_md, st.engine, DNNL_MEMORY_NONE), "src memory");
    check_dnnl(dnnl_memory_create(&st.user_weights, &weight_md, st.engine, DNNL_MEMORY_NONE), "weight memory");
    check_dnnl(dnnl_memory_create(&st.user_dst, &dst_md, st.engine, DNNL_MEMORY_NONE), "dst memory");
  } else {
    check_dnnl(dnnl_memory_create(&st.src, &src_md, st.engine, DNNL_MEMORY_NONE), "src memory");
    check_dnnl(dnnl_memory_create(&st.weights, &weight_md, st.engine, DNNL_MEMORY_NONE), "weight memory");
    check_dnnl(dnnl_memory_create(&st.dst, &dst_md, st.engine, DNNL_MEMORY_NONE), "dst memory");
  }
}

OnednnConv2d::~OnednnConv2d() {
  State& st = *state_;
  for (dnnl_memory_t m : {st.src, st.weights, st.dst, st.user_src, st.user_weights, st.user_dst}) {
    if (m) dnnl_memory_destroy(m);
  }
}

void OnednnConv2d::bind(const float* input, const float* weight, float* output) {
  State& st = *state_;
  if (st.layout == OnednnConvLayout::Plain) {
    check_dnnl(dnnl_memory_set_data_handle(st.src, const_cast<float*>(input)), "set src");
    check_dnnl(dnnl_memory_set_data_handle(st.weights, const_cast<float*>(weight)), "set weights");
    check_dnnl(dnnl_memory_set_data_handle(st.dst, output), "set dst");
    return;
  }
  check_dnnl(dnnl_memory_set_data_handle(st.user_src, const_cast<float*>(input)), "set src");
  check_dnnl(dnnl_memory_set_data_handle(st.user_weights, const_cast<float*>(weight)), "set weights");
  check_dnnl(dnnl_memory_set_data_handle(st.user_dst, output), "set dst");
  st.reorder(st.user_src, st.src);
  st.reorder(st.user_weights, st.weights);
}

void OnednnConv2d::run() {
  State& st = *state_;
  st.execute({{DNNL_ARG_SRC, st.src}, {DNNL_ARG_WEIGHTS, st.weights}, {DNNL_ARG_DST, st.dst}}, "convolution");
}

void OnednnConv2d::fetch_output() {
  State& st = *state_;
  if (st.layout == OnednnConvLayout::Blocked) st.reorder(st.dst, st.user_dst);
}

std::string OnednnConv2d::implementation() const {
  const State& st = *state_;
  std::string text = st.implementation();
  if (st.layout == OnednnConvLayout::Blocked) {
    text += " src=" + layout_name(*dnnl_primitive_desc_query_md(st.pd, dnnl_query_src_md, 0), "nchw");
    const dnnl_memory_desc_t* weights = dnnl_primitive_desc_query_md(st.pd, dnnl_query_weights_md, 0);
    text += " weights=" + layout_name(*weights, weights->ndims == 5 ? "goihw" : "oihw");
    text += " dst=" + layout_name(*dnnl_primitive_desc_query_md(st.pd, dnnl_query_dst_md, 0), "nchw");
  }
  return text;
}

struct OnednnRowOp::State : OnednnPrimitive {
  dnnl_memory_t src = nullptr, dst = nullptr, scale = nullptr, shift = nullptr;
};

OnednnRowOp::OnednnRowOp(Kind kind, int64_t rows, int64_t row_length, const float* input, float* output,
                         const float* gamma, const float* beta, float epsilon)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  dnnl_dims_t dims = {rows, row_length};
  dnnl_memory_desc_t data_md;
  check_dnnl(dnnl_memory_desc_init_by_tag(&data_md, 2, dims, dnnl_f32, dnnl_ab), "data memory desc");
  if (kind == Kind::Softmax) {
    dnnl_softmax_desc_t desc;
    check_dnnl(dnnl_softmax_forward_desc_init(&desc, dnnl_forward_inference, &data_md, 1),
               "dnnl_softmax_forward_desc_init");
    st.create(&desc, "softmax");
  } else {
    dnnl_layer_normalization_desc_t desc;
    check_dnnl(dnnl_layer_normalization_forward_desc_init(&desc, dnnl_forward_inference, &data_md, nullptr, epsilon,
                                                          dnnl_use_scale | dnnl_use_shift),
               "dnnl_layer_normalization_forward_desc_init");
    st.create(&desc, "layer normalization");
  }
  check_dnnl(dnnl_memory_create(&st.src, &data_md, st.engine, const_cast<float*>(input)), "src memory");
  check_dnnl(dnnl_memory_create(&st.dst, &data_md, st.engine, output), "dst memory");
  if (kind == Kind::LayerNorm) {
    dnnl_dims_t channel_dims = {row_length};
    dnnl_memory_desc_t channel_md;
    check_dnnl(dnnl_memory_desc_init_by_tag(&channel_md, 1, channel_dims, dnnl_f32, dnnl_a), "scale memory desc");
    check_dnnl(dnnl_memory_create(&st.scale, &channel_md, st.engine, const_cast<float*>(gamma)), "scale memory");
    check_dnnl(dnnl_memory_create(&st.shift, &channel_md, st.engine, const_cast<float*>(beta)), "shift memory");
  }
}

OnednnRowOp::~OnednnRowOp() {
  State& st = *state_;
  for (dnnl_memory_t m : {st.src, st.dst, st.scale, st.shift}) {
    if (m) dnnl_memory_destroy(m);
  }
}

void OnednnRowOp::run() {
  State& st = *state_;
  std::vector<dnnl_exec_arg_t> args = {{DNNL_ARG_SRC, st.src}, {DNNL_ARG_DST, st.dst}};
  if (st.scale) args.push_back({DNNL_ARG_SCALE, st.scale});
  if (st.shift) args.push_back({DNNL_ARG_SHIFT, st.shift});
  st.execute(std::move(args), "row op");
}

std::string OnednnRowOp::implementation() const { return state_->implementation(); }

}  // namespace temper::bench
