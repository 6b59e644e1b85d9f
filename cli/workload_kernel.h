// A workload's kernel compiled with one schedule and checked against its reference, ready
// to be timed: what `temper run WORKLOAD` and `temper sweep` time. A wrong result is a
// UserError (its time would mean nothing). A template config that packs a weight
// (conv2d's NCHWc blocks, dense's transposed weight) runs as the tuner and a model build
// run it: on the weight packed once, ahead of the timing.
#pragma once

#include <memory>

#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "compiler/ops/schedule_source.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/timer.h"
#include "compiler/target/target.h"

namespace temper::cli {

class CheckedKernel {
 public:
  // data: the inputs and the reference's outputs (ops::make_op_data), copied.
  CheckedKernel(const ops::Workload& workload, const ops::OpInstance& op, const ops::SourcedSchedule& schedule,
                const Target& target, const ops::OpData& data);

  const BuildResult& build() const { return build_; }
  const Comparison& check() const { return check_; }
  bool weight_packed() const { return weight_packed_; }
  TimingResult time(const TimingOptions& options);

 private:
  BuildResult build_;
  PackedFunc function_;
  std::string function_name_;
  ops::OpData data_;
  Comparison check_;
  bool weight_packed_ = false;
};

}  // namespace temper::cli
