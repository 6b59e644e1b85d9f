#include "tuning_db/record_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compiler/ir/error.h"
#include "compiler/ops/workload.h"
#include "compiler/schedule/trace.h"

namespace temper::tuning_db {
namespace {

// FLOPs credited but not done (Winograd convolutions) are at most this many times those done.
constexpr double kAlgorithmCredit = 4;
// 2 FMA pipes x 16 float lanes x 2 FLOPs x 6 GHz, and the credit.
constexpr double kCoreFlopsBound = 2 * 16 * 2 * 6e9 * kAlgorithmCredit;
constexpr double kGpuFlopsBound = 2e15;

std::string gflops(double flops_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f GFLOP/s", flops_per_s * 1e-9);
  return text;
}

}  // namespace

double cpu_core_flops_bound() {
  return kCoreFlopsBound;
}

double gpu_flops_bound() {
  return kGpuFlopsBound;
}

std::string implausible_record(const TuningRecord& record) {
  double flops = 0;
  try {
    ops::Workload workload = ops::Workload::parse(record.workload.workload);
    if (workload.op != record.workload.op) {
      return str("its workload ", record.workload.workload, " is of op ", workload.op, ", not ", record.workload.op);
    }
    flops = ops::instantiate(workload).flops;
  } catch (const UserError&) {
    // An op this Temper does not know: nothing more to check against.
  }
  try {
    Trace::from_json(record.trace);
  } catch (const std::exception& e) {
    return str("its trace is not a schedule trace (", e.what(), ")");
  }
  if (record.error != ErrorKind::None) {
    if (std::isfinite(record.mean)) return str("it failed (", error_kind_name(record.error), ") but has a mean time");
    return "";
  }
  if (record.costs.empty()) return "it has a time but no costs";
  for (double cost : record.costs) {
    if (!std::isfinite(cost) || cost <= 0) return str("a cost of ", cost, " s is not a time");
  }
  auto [least, greatest] = std::minmax_element(record.costs.begin(), record.costs.end());
  double slack = 1e-9 * *greatest;
  if (!std::isfinite(record.mean) || record.mean < *least - slack || record.mean > *greatest + slack) {
    return str("its mean ", record.mean, " s is not among its costs (", *least, " to ", *greatest, " s)");
  }
  if (flops > 0) {
    bool gpu = !record.target.device.empty();
    double bound = gpu ? kGpuFlopsBound : kCoreFlopsBound * std::max(1, record.target.cores);
    double speed = flops / record.mean;
    if (speed > bound) {
      return str("its time, ", record.mean, " s, is ", gflops(speed), ", more than ",
                 gpu ? "any GPU" : str("any CPU of ", std::max(1, record.target.cores), " cores"), " can do (",
                 gflops(bound), "): a wrong or made-up measurement");
    }
  }
  return "";
}

std::string faster_than_this_machine(const TuningRecord& record, const TargetInfo& here,
                                     const std::function<double()>& peak_flops) {
  if (!record.is_valid() || !record.target.device.empty() || !same_machine(record.target, here)) return "";
  double flops = 0;
  try {
    flops = ops::instantiate(ops::Workload::parse(record.workload.workload)).flops;
  } catch (const UserError&) {
    return "";
  }
  double peak = peak_flops();
  if (!(peak > 0)) return "";
  double speed = flops / record.mean;
  double bound = peak * kAlgorithmCredit;
  if (speed <= bound) return "";
  return str("its time, ", record.mean, " s, is ", gflops(speed), ", more than this machine, where it says it was "
             "measured, can do (", gflops(bound), ": ", kAlgorithmCredit, "x its measured FMA peak of ",
             gflops(peak), ")");
}

}  // namespace temper::tuning_db
