// Templates: one C++ function pair per op and target kind (AutoTVM's templates). define
// lays out the knobs for one workload; apply turns a config into a schedule of the op.
// A Task binds a workload and target to its template and space: the unit a tuner works
// on and the log records.
//
//   std::unique_ptr<Task> task = Task::create(ops::Workload::parse("matmul:M=1024,N=1024,K=1024"),
//                                             Target::parse("llvm -mcpu=native"));
//   Config c = task->default_config();    // a sound choice from the shape, not a naive one
//   Schedule s = task->apply(c);          // s.trace() is what the log stores
//
// apply may schedule a re-expression of the op rather than op.func itself (a conv2d in a
// packed NCHWc layout, with packing and unpacking stages inside): its PrimFunc takes the
// same parameters, in the same order, with the same shapes, so the same data and
// reference check it. Replaying a record therefore goes through the template (Task::apply
// of the record's config), not Trace::replay on op.func.
//
// Where such a re-expression packs a constant input (conv2d's weight under NCHWc, dense's
// weight transposed under b_layout=KN), Task::apply_prepacked splits it in two: a pack
// function run once on the constant at build time, and the op computed from the packed
// array -- apply's schedule less its packing stage.
//
//   if (std::optional<PrepackedSchedule> p = task->apply_prepacked(c)) {
//     // build p->pack and p->compute; run pack(weight, packed) once, then
//     // compute(input, packed, output) per call: input p->input is replaced by packed.
//   }
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ops/workload.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/config_space.h"

namespace temper::schedule_space {

// A schedule whose input `input` arrives already packed: `pack` (a scheduled PrimFunc with
// parameters (the original input, the packed array)) is run once on a constant; `compute`
// takes the op's parameters with that input replaced by the packed array (same order).
struct PrepackedSchedule {
  int input = -1;
  Schedule pack;
  Schedule compute;
};

// p.pack built for target and run once on `original` (the op's input p.input): the array
// p.compute reads in its place. What a model build does to a constant weight, and what a
// benchmark or `temper run` does before timing the compute function alone.
NDArray pack_once(const PrepackedSchedule& p, const NDArray& original, const Target& target);

struct Template {
  std::string name;  // "matmul.cpu"
  // Lays out the knobs. UserError when the template cannot serve the workload (saying
  // which parameter and what it supports).
  std::function<void(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target)>
      define;
  // Schedules the op for config. May throw ScheduleError for a config the space
  // accepted but the schedule cannot take; the measurer records it as an
  // instantiation error.
  std::function<Schedule(const Config& config, const ops::OpInstance& op, const ops::Workload& w,
                         const Target& target)>
      apply;
  // The config to use when the log has nothing: chosen from the shape by a rule.
  std::function<Config(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                       const Target& target)>
      default_config;
  // Optional, empty when the template never packs an input: the schedule of apply split
  // into the packing of one input and the op computed from the packed array, or nullopt
  // when config packs nothing.
  std::function<std::optional<PrepackedSchedule>(const Config& config, const ops::OpInstance& op,
                                                 const ops::Workload& w, const Target& target)>
      prepacked = nullptr;
};

// The template for op on target, or nullptr.
const Template* find_template(const std::string& op, const Target& target);
// The ops that have a template for target, in a fixed order (for error messages).
std::vector<std::string> ops_with_templates(const Target& target);

class Task {
 public:
  // UserError when no template serves the op on that target (listing those that exist),
  // or when the template cannot serve the workload's shape.
  static std::unique_ptr<Task> create(const ops::Workload& workload, const Target& target);

  const ops::Workload& workload() const { return workload_; }
  const ops::OpInstance& op() const { return op_; }
  const Target& target() const { return target_; }
  const Template& tmpl() const { return *template_; }
  // Configs point at this space, so a Task stays where create() put it.
  const ConfigSpace& space() const { return space_; }

  Config default_config() const;
  Schedule apply(const Config& config) const;
  // apply's schedule with an input packed ahead of time (see PrepackedSchedule); nullopt
  // when the template has no such hook or config packs nothing (conv2d under layout=NCHW,
  // a GEMM that does not transpose B).
  std::optional<PrepackedSchedule> apply_prepacked(const Config& config) const;

  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  Task(Task&&) = delete;

 private:
  Task(ops::Workload workload, ops::OpInstance op, Target target, const Template* tmpl);
  ops::Workload workload_;
  ops::OpInstance op_;
  Target target_;
  const Template* template_;
  ConfigSpace space_;
};

}  // namespace temper::schedule_space
