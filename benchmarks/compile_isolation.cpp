// What compiling each candidate in another process costs against compiling it in the
// tuning process, as the builder did at first: the same candidates (the default schedules
// of a BERT projection, a ResNet conv and a softmax) compiled three ways, interleaved, one
// at a time -- in this process; in a forked child of its own (measure/compile_process.h);
// and by a long-lived compile worker that rebuilds it from its recipe
// (measure/compile_pool.h), the builder's way for every proposal of a tuner. The fork
// copies the parent's page tables, so its cost grows with the tuning process's resident
// memory: --resident-mb adds that much touched heap first (a long job's cost model, log
// and measured data). Prints medians and the ratios to the in-process compile.
//
//   compile_isolation [--rounds N] [--resident-mb M]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ir/error.h"
#include "compiler/ops/cpu_schedules.h"
#include "measure/compile_pool.h"
#include "measure/compile_process.h"
#include "search/candidate_recipe.h"

namespace temper::bench {
namespace {

using Clock = std::chrono::steady_clock;

const char* kWorkloads[] = {
    "matmul:M=128,N=768,K=768",                      // a BERT-base projection
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",  // ResNet-18's first stage
    "softmax:shape=12x128x128,axis=2",
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run(int rounds, int resident_mb) {
  std::vector<char> resident(static_cast<size_t>(resident_mb) << 20);
  for (size_t i = 0; i < resident.size(); i += 4096) resident[i] = static_cast<char>(i);

  Target target = Target::parse("llvm -mcpu=native");
  std::string dir = std::filesystem::temp_directory_path() / str("temper-compile-isolation-", getpid());
  std::filesystem::create_directories(dir);
  std::printf("compile_isolation: %d rounds interleaved, %d MB of extra resident heap; medians\n", rounds, resident_mb);
  std::printf("  %-44s %12s %12s %12s %8s %8s\n", "candidate", "in process", "forked", "worker", "forked/", "worker/");
  measure::CompileWorker worker(measure::find_compile_worker());
  for (const char* text : kWorkloads) {
    ops::Workload workload = ops::Workload::parse(text);
    ops::OpInstance op = ops::instantiate(workload);
    Schedule schedule = ops::schedule_cpu_default(op, target);
    measure::MeasureInput input{workload, target, schedule.func(), std::nullopt, -1, ""};
    input.recipe = search::candidate_recipe(nullptr, schedule.trace().to_json(), false);
    std::string path = dir + "/candidate.so";
    std::vector<double> in_process, forked, pooled;
    for (int r = 0; r < rounds; ++r) {
      Clock::time_point start = Clock::now();
      export_library({input.func}, target, path);
      in_process.push_back(seconds_since(start));

      start = Clock::now();
      measure::BuildArtifact artifact = measure::compile_in_child_process(input, path, 60);
      forked.push_back(seconds_since(start));
      if (artifact.error != measure::MeasureError::None) {
        throw UserError(str(text, ": the forked compile failed: ", artifact.message));
      }

      start = Clock::now();
      std::optional<measure::BuildArtifact> by_worker = worker.compile(input, path, 60);
      pooled.push_back(seconds_since(start));
      if (!by_worker || by_worker->error != measure::MeasureError::None) {
        throw UserError(str(text, ": the compile worker failed: ", by_worker ? by_worker->message : "not rebuilt"));
      }
    }
    double a = median(in_process), b = median(forked), c = median(pooled);
    std::printf("  %-44s %9.1f ms %9.1f ms %9.1f ms %7.3fx %7.3fx\n", text, a * 1e3, b * 1e3, c * 1e3, b / a, c / a);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int rounds = 15, resident_mb = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--rounds" || arg == "--resident-mb") && i + 1 < argc) {
      (arg == "--rounds" ? rounds : resident_mb) = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: compile_isolation [--rounds N] [--resident-mb M]\n");
      return 2;
    }
  }
  try {
    bench::wait_for_idle_cpu();
    bench::run(std::max(1, rounds), std::max(0, resident_mb));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compile_isolation: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
