#include "cli/workload_kernel.h"

#include "compiler/codegen/gpu/gpu_module.h"
#include "compiler/ir/error.h"
#include "schedule_space/template.h"

namespace temper::cli {

CheckedKernel::CheckedKernel(const ops::Workload& workload, const ops::OpInstance& op,
                             const ops::SourcedSchedule& schedule, const Target& target, const ops::OpData& data)
    : data_(data) {
  std::optional<schedule_space::PrepackedSchedule> prepacked;
  if (!target.is_gpu() && !schedule.config.is_null() && schedule_space::find_template(workload.op, target)) {
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
    prepacked = task->apply_prepacked(task->space().from_json(schedule.config));
  }
  if (prepacked) {
    data_.inputs[prepacked->input] = schedule_space::pack_once(*prepacked, data.inputs[prepacked->input], target);
    build_ = temper::build({prepacked->compute.func()}, target);
    function_name_ = prepacked->compute.func().name;
    weight_packed_ = true;
  } else {
    build_ = temper::build({schedule.schedule.func()}, target);
    function_name_ = op.func.name;
  }
  function_ = build_.module->get_function(function_name_);
  check_ = ops::run_and_check(function_, data_);
  if (!check_.ok()) throw UserError(str("wrong result: ", check_.message));
}

TimingResult CheckedKernel::time(const TimingOptions& options) {
  std::vector<NDArray*> args = data_.args();
  // A GPU function called on host tensors copies them each call: time the kernels alone.
  auto* gpu = dynamic_cast<GpuModule*>(build_.module.get());
  return gpu ? gpu->time(function_name_, args, options) : time_function([&] { function_(args); }, options);
}

}  // namespace temper::cli
