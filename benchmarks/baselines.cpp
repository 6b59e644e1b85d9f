#include "benchmarks/baselines.h"

#include <cblas.h>
#include <dnnl.h>

#include <Eigen/Dense>
#include <stdexcept>
#include <string>

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

}  // namespace

struct OnednnConv2d::State {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t src = nullptr, weights = nullptr, dst = nullptr, scratchpad = nullptr;
};

OnednnConv2d::OnednnConv2d(const ConvShape& c) : state_(std::make_unique<State>()) {
  State& st = *state_;
  check_dnnl(dnnl_engine_create(&st.engine, dnnl_cpu, 0), "dnnl_engine_create");
  check_dnnl(dnnl_stream_create(&st.stream, st.engine, dnnl_stream_default_flags), "dnnl_stream_create");
  dnnl_dims_t src_dims = {c.N, c.C, c.H, c.W};
  dnnl_dims_t weight_dims = {c.K, c.C, c.R, c.S};
  dnnl_dims_t dst_dims = {c.N, c.K, c.P(), c.Q()};
  dnnl_dims_t strides = {c.stride_h, c.stride_w};
  dnnl_dims_t pad_l = {c.pad_top, c.pad_left};
  dnnl_dims_t pad_r = {c.pad_bottom, c.pad_right};
  dnnl_memory_desc_t src_md, weight_md, dst_md;
  check_dnnl(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, dnnl_nchw), "src memory desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&weight_md, 4, weight_dims, dnnl_f32, dnnl_oihw), "weight memory desc");
  check_dnnl(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dnnl_nchw), "dst memory desc");
  dnnl_convolution_desc_t desc;
  check_dnnl(dnnl_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
                                                &weight_md, nullptr, &dst_md, strides, pad_l, pad_r),
             "dnnl_convolution_forward_desc_init");
  dnnl_primitive_attr_t attr;
  check_dnnl(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
  // A user-managed scratchpad keeps every allocation out of run().
  check_dnnl(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user), "scratchpad mode");
  dnnl_status_t created = dnnl_primitive_desc_create(&st.pd, &desc, attr, st.engine, nullptr);
  dnnl_primitive_attr_destroy(attr);
  check_dnnl(created, "dnnl_primitive_desc_create (convolution)");
  check_dnnl(dnnl_primitive_create(&st.primitive, st.pd), "dnnl_primitive_create");
  check_dnnl(dnnl_memory_create(&st.src, &src_md, st.engine, DNNL_MEMORY_NONE), "src memory");
  check_dnnl(dnnl_memory_create(&st.weights, &weight_md, st.engine, DNNL_MEMORY_NONE), "weight memory");
  check_dnnl(dnnl_memory_create(&st.dst, &dst_md, st.engine, DNNL_MEMORY_NONE), "dst memory");
  const dnnl_memory_desc_t* scratch_md = dnnl_primitive_desc_query_md(st.pd, dnnl_query_scratchpad_md, 0);
  if (scratch_md && dnnl_memory_desc_get_size(scratch_md) > 0) {
    check_dnnl(dnnl_memory_create(&st.scratchpad, scratch_md, st.engine, DNNL_MEMORY_ALLOCATE), "scratchpad memory");
  }
}

OnednnConv2d::~OnednnConv2d() {
  State& st = *state_;
  for (dnnl_memory_t m : {st.src, st.weights, st.dst, st.scratchpad}) {
    if (m) dnnl_memory_destroy(m);
  }
  if (st.primitive) dnnl_primitive_destroy(st.primitive);
  if (st.pd) dnnl_primitive_desc_destroy(st.pd);
  if (st.stream) dnnl_stream_destroy(st.stream);
  if (st.engine) dnnl_engine_destroy(st.engine);
}

void OnednnConv2d::run(const float* input, const float* weight, float* output) {
  State& st = *state_;
  check_dnnl(dnnl_memory_set_data_handle(st.src, const_cast<float*>(input)), "set src");
  check_dnnl(dnnl_memory_set_data_handle(st.weights, const_cast<float*>(weight)), "set weights");
  check_dnnl(dnnl_memory_set_data_handle(st.dst, output), "set dst");
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, st.src},
                             {DNNL_ARG_WEIGHTS, st.weights},
                             {DNNL_ARG_DST, st.dst},
                             {DNNL_ARG_SCRATCHPAD, st.scratchpad}};
  int nargs = st.scratchpad ? 4 : 3;
  check_dnnl(dnnl_primitive_execute(st.primitive, st.stream, nargs, args), "dnnl_primitive_execute (convolution)");
  check_dnnl(dnnl_stream_wait(st.stream), "dnnl_stream_wait");
}

std::string OnednnConv2d::implementation() const {
  const char* info = nullptr;
  check_dnnl(dnnl_primitive_desc_query(state_->pd, dnnl_query_impl_info_str, 0, &info), "impl info");
  return info ? info : "?";
}

}  // namespace temper::bench
