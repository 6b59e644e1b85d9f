// temper-baseline: one vendor kernel (oneDNN, OpenBLAS or Eigen on the CPU, cuBLAS on the
// first CUDA device) on one workload, timed on request, for `temper sweep`
// (sweep/baseline_process.h), which must not link these libraries itself. Protocol, one
// line each way, flushed:
//
//   start:      temper-baseline BASELINE WORKLOAD THREADS   (argv; THREADS 0: one per core)
//               -> "ready BASELINE DESCRIPTION" | "unsupported: WHY" (exit 0) | "error: WHY" (exit 1)
//   "round MS"  calls the kernel until MS milliseconds have passed, at least once -> "seconds PER_CALL"
//   "quit"      exits 0
//
// Inputs are random; the primitive is built and run once before "ready", so that no round
// pays for its creation or first touch of memory. cuBLAS's rounds are timed by the
// device's clock in groups of calls with the cache flushed between them, as the sweep
// times Temper's CUDA kernels (GpuModule::time).
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "benchmarks/cublas.h"
#include "compiler/ir/error.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/runtime/timer.h"

namespace temper::bench {
namespace {

// A kernel ready to run: its arrays, what runs on them, and what it is; a device
// kernel also says how a round of it is timed.
struct Kernel {
  std::string description;
  std::function<void()> run;
  std::function<double(double min_ms)> time_round;  // seconds per call; unset: the host clock times run
  std::vector<NDArray> arrays;
  std::shared_ptr<OnednnConv2d> conv;
};

NDArray random_array(std::vector<int64_t> shape, uint64_t seed) {
  return NDArray::random(std::move(shape), DataType::float32(), seed);
}

bool has_key(const ops::Workload& w, const std::string& key) {
  for (const auto& [k, v] : w.params) {
    if (k == key) return true;
  }
  return false;
}

void require_float32(const ops::Workload& w) {
  if (has_key(w, "dtype") && w.get("dtype") != "float32") {
    throw UnsupportedError(str("dtype=", w.get("dtype"), ": the baselines run float32 only"));
  }
}

std::string library_version(const std::string& baseline) {
  if (baseline == "onednn") {
    const dnnl_version_t* v = dnnl_version();
    return str("oneDNN ", v->major, ".", v->minor, ".", v->patch);
  }
  if (baseline == "openblas") return openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ... SkylakeX ..."
  return str("Eigen ", EIGEN_WORLD_VERSION, ".", EIGEN_MAJOR_VERSION, ".", EIGEN_MINOR_VERSION);
}

// cuBLAS's sgemm on the first CUDA device, its inputs copied there once.
Kernel cublas_gemm(int64_t M, int64_t N, int64_t K) {
  std::shared_ptr<GpuDevice> device;
  std::shared_ptr<CublasSgemm> cublas;
  try {
    device = open_gpu_device(Target::parse("cuda"));
    cublas = std::make_shared<CublasSgemm>();
  } catch (const UnsupportedError&) {
    throw;
  } catch (const UserError& e) {
    throw UnsupportedError(e.what());  // no device, no driver, no cuBLAS: the column says which
  }
  Kernel k;
  k.arrays = {random_array({M, K}, 1), random_array({K, N}, 2)};
  // Freed with the last copy of the kernel's functions.
  std::shared_ptr<std::vector<DeviceMemory>> buffers(new std::vector<DeviceMemory>, [device](auto* b) {
    for (DeviceMemory m : *b) device->free(m);
    delete b;
  });
  for (const NDArray& a : k.arrays) {
    buffers->push_back(device->alloc(a.nbytes()));
    device->copy_from_host(buffers->back(), a.data(), a.nbytes());
  }
  buffers->push_back(device->alloc(M * N * static_cast<int64_t>(sizeof(float))));
  k.run = [=] { cublas->run(M, N, K, (*buffers)[0], (*buffers)[1], (*buffers)[2]); };
  k.time_round = [=](double min_ms) {
    auto run_group = [&](int calls) {
      return device->time_on_device([&] {
        for (int c = 0; c < calls; ++c) cublas->run(M, N, K, (*buffers)[0], (*buffers)[1], (*buffers)[2]);
      });
    };
    TimingOptions options;
    options.repeat = 1;
    options.min_repeat_ms = min_ms;
    return time_groups(run_group, [&] { device->flush_cache(); }, options).median_s;
  };
  k.description = str(cublas->version(), " sgemm on ", device->info().name);
  return k;
}

Kernel gemm(const std::string& baseline, int64_t M, int64_t N, int64_t K) {
  if (baseline == "cublas") return cublas_gemm(M, N, K);
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) throw UnsupportedError("a GEMM dimension exceeds 2^31");
  auto* sgemm = baseline == "onednn" ? onednn_sgemm : baseline == "openblas" ? openblas_sgemm : eigen_sgemm;
  Kernel k;
  k.arrays = {random_array({M, K}, 1), random_array({K, N}, 2), NDArray::empty({M, N}, DataType::float32())};
  const float* a = k.arrays[0].data_as<float>();
  const float* b = k.arrays[1].data_as<float>();
  float* c = k.arrays[2].data_as<float>();
  int m = static_cast<int>(M), n = static_cast<int>(N), kk = static_cast<int>(K);
  k.run = [=] { sgemm(m, n, kk, a, b, c); };
  k.description = str(library_version(baseline), " sgemm");
  return k;
}

// A window parameter of 1 or 2 values (H, HxW).
std::pair<int64_t, int64_t> pair_of(const ops::Workload& w, const std::string& key) {
  std::vector<int64_t> v = w.get_ints(key);
  return {v.at(0), v.size() > 1 ? v[1] : v[0]};
}

Kernel convolution(const ops::Workload& w) {
  bool depthwise = w.op.rfind("depthwise_", 0) == 0;
  bool blocked = w.op.ends_with("_nchwc");
  if (has_key(w, "layout") && w.get("layout") != "NCHW") {
    throw UnsupportedError(str("layout=", w.get("layout"), ": the oneDNN baseline runs NCHW convolutions"));
  }
  auto [dilation_h, dilation_w] = pair_of(w, "dilation");
  if (dilation_h != 1 || dilation_w != 1) throw UnsupportedError("dilation: the oneDNN baseline runs dilation=1 only");
  ConvShape s;
  s.N = w.get_int("N");
  s.C = w.get_int("C");
  s.H = w.get_int("H");
  s.W = w.get_int("W");
  s.R = w.get_int("R");
  s.S = w.get_int("S");
  if (depthwise) {
    s.groups = s.C;
    s.K = s.C * (has_key(w, "multiplier") ? w.get_int("multiplier") : 1);
  } else {
    s.K = w.get_int("K");
    s.groups = has_key(w, "groups") ? w.get_int("groups") : 1;
  }
  std::tie(s.stride_h, s.stride_w) = pair_of(w, "stride");
  std::vector<int64_t> pad = w.get_ints("pad");  // P, PHxPW or TOPxLEFTxBOTTOMxRIGHT
  if (pad.size() == 4) {
    s.pad_top = pad[0], s.pad_left = pad[1], s.pad_bottom = pad[2], s.pad_right = pad[3];
  } else {
    s.pad_top = s.pad_bottom = pad.at(0);
    s.pad_left = s.pad_right = pad.size() > 1 ? pad[1] : pad[0];
  }
  Kernel k;
  k.conv = std::make_shared<OnednnConv2d>(s, blocked ? OnednnConvLayout::Blocked : OnednnConvLayout::Plain);
  k.arrays = {random_array({s.N, s.C, s.H, s.W}, 1), random_array({s.K, s.C / s.groups, s.R, s.S}, 2),
              NDArray::empty({s.N, s.K, s.P(), s.Q()}, DataType::float32())};
  // Blocked: in_block/out_block are Temper's; oneDNN reorders into the layouts it picks, here, untimed.
  k.conv->bind(k.arrays[0].data_as<float>(), k.arrays[1].data_as<float>(), k.arrays[2].data_as<float>());
  OnednnConv2d* conv = k.conv.get();
  k.run = [conv] { conv->run(); };
  k.description = str(library_version("onednn"), " conv ", conv->implementation(), blocked ? "" : " (nchw, oihw)",
                      s.groups > 1 ? str(", groups=", s.groups) : "");
  return k;
}

Kernel make_kernel(const std::string& baseline, const std::string& text) {
  ops::Workload w = ops::Workload::parse(text);
  if (w.op == "matmul") {
    require_float32(w);
    if (w.get_bool("transpose_a") || w.get_bool("transpose_b")) {
      throw UnsupportedError("matmul with transpose_a or transpose_b: the baselines run A[M,K] B[K,N] only");
    }
    return gemm(baseline, w.get_int("M"), w.get_int("N"), w.get_int("K"));
  }
  if (w.op == "dense") {
    require_float32(w);
    Kernel k = gemm(baseline, w.get_int("M"), w.get_int("N"), w.get_int("K"));
    k.description += " (dense as the GEMM of its shape: no bias, no activation)";
    return k;
  }
  bool conv =
      w.op == "conv2d" || w.op == "conv2d_nchwc" || w.op == "depthwise_conv2d" || w.op == "depthwise_conv2d_nchwc";
  if (conv && baseline == "onednn") {
    require_float32(w);
    return convolution(w);
  }
  throw UnsupportedError(str(baseline, " has no baseline for ", w.op,
                             conv ? " (oneDNN's has)" : " (baselines: matmul, dense; oneDNN also conv2d)"));
}

// Seconds per call over a round of at least min_ms (one call at least).
double time_round(const Kernel& k, double min_ms) {
  if (k.time_round) return k.time_round(min_ms);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  int64_t calls = 0;
  double elapsed_s;
  do {
    k.run();
    ++calls;
    elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed_s * 1e3 < min_ms);
  return elapsed_s / static_cast<double>(calls);
}

int serve(int argc, char** argv) {
  if (argc != 4) {
    std::printf("error: usage: temper-baseline onednn|openblas|eigen|cublas WORKLOAD THREADS\n");
    return 1;
  }
  std::string baseline = argv[1];
  if (baseline != "onednn" && baseline != "openblas" && baseline != "eigen" && baseline != "cublas") {
    std::printf("error: unknown baseline '%s': onednn, openblas, eigen or cublas\n", baseline.c_str());
    return 1;
  }
  if (baseline == "openblas") ensure_openblas_coretype(argv);  // may re-exec this program
  int threads = std::atoi(argv[3]);
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  omp_set_num_threads(threads);  // oneDNN's and Eigen's threads (both OpenMP here)
  openblas_set_num_threads(threads);
  Kernel kernel;
  try {
    kernel = make_kernel(baseline, argv[2]);
    kernel.run();
  } catch (const UnsupportedError& e) {
    std::printf("unsupported: %s\n", e.what());
    return 0;
  }
  std::printf("ready %s %s\n", baseline.c_str(), kernel.description.c_str());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.rfind("round ", 0) == 0) {
      std::printf("seconds %.9g\n", time_round(kernel, std::atof(line.c_str() + 6)));
      std::fflush(stdout);
    } else if (line == "quit") {
      return 0;
    } else if (!line.empty()) {
      std::printf("error: unknown command '%s'\n", line.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  try {
    return temper::bench::serve(argc, argv);
  } catch (const std::exception& e) {  // one line the sweep can show, not a terminate message
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;
    std::printf("error: %s\n", what.c_str());
    return 1;
  }
}
