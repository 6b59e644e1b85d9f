// fp32 matmul on all cores: Temper's naive schedule and its expert schedule
// (ops::schedule_cpu_default: B packed into panels, register tile, vectorize, unroll,
// parallel) next to oneDNN's dnnl_sgemm, OpenBLAS's cblas_sgemm and Eigen, measured in
// the same run, interleaved round by round so that a burst of load on this shared machine
// hits every contender alike. Prints GFLOP/s (median over rounds) and ratios to oneDNN.
//
//   matmul_schedules [--rounds N] [--shapes MxNxK,...] [--skip-naive]
//
// Every result is checked against oneDNN's before its time counts.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"

namespace temper::bench {
namespace {

struct Shape {
  int M, N, K;
  std::string name() const { return str(M, "x", N, "x", K); }
};

struct Contender {
  std::string name;
  std::function<void()> run;
  std::vector<double> round_seconds;
  double compile_seconds = -1;  // JIT compile time, Temper's kernels only
};

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    std::string item = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    Shape s{};
    if (std::sscanf(item.c_str(), "%dx%dx%d", &s.M, &s.N, &s.K) != 3 || s.M <= 0 || s.N <= 0 || s.K <= 0) {
      throw UserError(str("--shapes: '", item, "' is not MxNxK with positive integers"));
    }
    shapes.push_back(s);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return shapes;
}

// Temper's kernel for one schedule, checked against oneDNN's product.
Contender temper_contender(const std::string& name, const ops::OpInstance& op, const Schedule& sch, NDArray& a,
                           NDArray& b, NDArray& c, const NDArray& expected) {
  BuildResult built = build({sch.func()}, Target::parse("llvm -mcpu=native"));
  PackedFunc f = built.module->get_function(op.func.name);
  std::vector<NDArray*> args = {&a, &b, &c};
  c.fill(0);
  f(args);
  Comparison cmp = compare(c, expected, 1e-4, 1e-4);
  if (!cmp.ok()) throw UserError(str(name, " disagrees with oneDNN: ", cmp.message));
  Contender k{name, [f, args] { f(args); }, {}, built.codegen_seconds};
  return k;
}

void run_shape(const Shape& s, int rounds, bool skip_naive) {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(str("matmul:M=", s.M, ",N=", s.N, ",K=", s.K)));
  NDArray a = NDArray::random({s.M, s.K}, DataType::float32(), 1);
  NDArray b = NDArray::random({s.K, s.N}, DataType::float32(), 2);
  NDArray c = NDArray::zeros({s.M, s.N}, DataType::float32());
  NDArray expected = NDArray::zeros({s.M, s.N}, DataType::float32());
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  float* pc = c.data_as<float>();
  onednn_sgemm(s.M, s.N, s.K, pa, pb, expected.data_as<float>());

  std::vector<Contender> all;
  all.push_back(temper_contender("temper_expert", op, ops::schedule_cpu_default(op, Target::parse("llvm -mcpu=native")), a, b, c, expected));
  all.push_back({"onednn", [&] { onednn_sgemm(s.M, s.N, s.K, pa, pb, pc); }, {}});
  all.push_back({"openblas", [&] { openblas_sgemm(s.M, s.N, s.K, pa, pb, pc); }, {}});
  all.push_back({"eigen", [&] { eigen_sgemm(s.M, s.N, s.K, pa, pb, pc); }, {}});
  for (Contender& k : all) {
    if (k.name == "temper_expert") continue;
    c.fill(0);
    k.run();
    Comparison cmp = compare(c, expected, 1e-4, 1e-4);
    if (!cmp.ok()) throw UserError(str(k.name, " disagrees with oneDNN: ", cmp.message));
  }

  wait_for_idle_cpu();
  for (int r = 0; r < rounds; ++r) {
    for (Contender& k : all) k.round_seconds.push_back(time_function(k.run, 3, 50).median_s);
  }
  // The naive loop nest takes seconds per call: timed once, outside the rounds.
  double naive_s = -1;
  double naive_compile = -1;
  if (!skip_naive) {
    Contender naive = temper_contender("temper_naive", op, Schedule(op.func), a, b, c, expected);
    naive_compile = naive.compile_seconds;
    naive_s = time_function(naive.run, 1, 0).median_s;
  }

  double flops = 2.0 * s.M * s.N * s.K;
  double onednn_s = median(all[1].round_seconds);
  std::printf("\n%s (%d rounds, medians)\n", s.name().c_str(), rounds);
  std::printf("  %-14s %10s %10s %12s\n", "kernel", "GFLOP/s", "vs_onednn", "jit_ms");
  if (naive_s > 0) {
    std::printf("  %-14s %10.2f %10.3f %12.1f\n", "temper_naive", flops / naive_s * 1e-9, onednn_s / naive_s,
                naive_compile * 1e3);
  }
  for (const Contender& k : all) {
    double t = median(k.round_seconds);
    if (k.compile_seconds >= 0) {
      std::printf("  %-14s %10.2f %10.3f %12.1f\n", k.name.c_str(), flops / t * 1e-9, onednn_s / t,
                  k.compile_seconds * 1e3);
    } else {
      std::printf("  %-14s %10.2f %10.3f %12s\n", k.name.c_str(), flops / t * 1e-9, onednn_s / t, "-");
    }
  }
  double expert_s = median(all[0].round_seconds);
  std::printf("%s expert_gflops=%.1f onednn_gflops=%.1f vs_onednn=%.3f vs_openblas=%.3f vs_eigen=%.3f", s.name().c_str(),
              flops / expert_s * 1e-9, flops / onednn_s * 1e-9, onednn_s / expert_s,
              median(all[2].round_seconds) / expert_s, median(all[3].round_seconds) / expert_s);
  if (naive_s > 0) std::printf(" vs_naive=%.1f", naive_s / expert_s);
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  std::string coretype = bench::ensure_openblas_coretype(argv);
  int rounds = 5;
  bool skip_naive = false;
  std::vector<bench::Shape> shapes = {{512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {128, 3072, 768}};
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--rounds" && i + 1 < argc) {
        rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--shapes" && i + 1 < argc) {
        shapes = bench::parse_shapes(argv[++i]);
      } else if (arg == "--skip-naive") {
        skip_naive = true;
      } else {
        throw UserError(str("unknown argument '", arg, "'; usage: matmul_schedules [--rounds N] [--shapes MxNxK,...] "
                                                       "[--skip-naive]"));
      }
    }
    int threads = temper_get_num_threads();
    Eigen::setNbThreads(threads);
    std::printf("fp32 matmul, %d threads; OPENBLAS_CORETYPE=%s; Temper target llvm -mcpu=native\n", threads,
                coretype.c_str());
    for (const bench::Shape& s : shapes) bench::run_shape(s, rounds, skip_naive);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matmul_schedules: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
