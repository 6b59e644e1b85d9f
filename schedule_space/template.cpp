#include "schedule_space/template.h"

#include "compiler/codegen/build.h"
#include "compiler/ir/error.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/gpu_templates.h"

namespace temper::schedule_space {
namespace {

struct TemplateEntry {
  const char* op;
  const Template& (*get)();
};

// Every CPU template, in the order error messages list them. Both CPU target kinds (LLVM
// and C) take them: the templates size their tiles by target.vector_bits().
const TemplateEntry kCpuTemplates[] = {
    {"matmul", matmul_template},
    {"batch_matmul", batch_matmul_template},
    {"dense", dense_template},
    {"conv2d", conv2d_template},
    {"depthwise_conv2d", depthwise_conv2d_template},
    {"conv2d_nchwc", conv2d_nchwc_template},
    {"group_conv2d_nchwc", conv2d_nchwc_template},
    {"depthwise_conv2d_nchwc", depthwise_conv2d_nchwc_template},
    {"depthwise_pointwise_nchwc", depthwise_pointwise_nchwc_template},
    {"conv2d_winograd_nchwc", conv2d_winograd_nchwc_template},
    {"max_pool2d", max_pool2d_template},
    {"avg_pool2d", avg_pool2d_template},
    {"attention", attention_template},
};

// Every GPU template but the injective one, in the order error messages list them.
// Both GPU target kinds (CUDA and OpenCL) take them: the templates size their vectors by
// the kind and filter their configs by the target's limits.
const TemplateEntry kGpuTemplates[] = {
    {"matmul", gpu_matmul_template},
    {"batch_matmul", gpu_batch_matmul_template},
    {"dense", gpu_dense_template},
    {"conv2d", gpu_conv2d_template},
    {"depthwise_conv2d", gpu_depthwise_conv2d_template},
    {"max_pool2d", gpu_max_pool2d_template},
    {"avg_pool2d", gpu_avg_pool2d_template},
};

}  // namespace

const Template* find_template(const std::string& op, const Target& target) {
  if (!target.is_gpu()) {
    for (const TemplateEntry& e : kCpuTemplates) {
      if (op == e.op) return &e.get();
    }
    return nullptr;
  }
  for (const TemplateEntry& e : kGpuTemplates) {
    if (op == e.op) return &e.get();
  }
  for (const std::string& injective : gpu_injective_ops()) {
    if (op == injective) return &gpu_injective_template(op);
  }
  return nullptr;
}

std::vector<std::string> ops_with_templates(const Target& target) {
  std::vector<std::string> ops;
  if (!target.is_gpu()) {
    for (const TemplateEntry& e : kCpuTemplates) ops.push_back(e.op);
    return ops;
  }
  for (const TemplateEntry& e : kGpuTemplates) ops.push_back(e.op);
  for (const std::string& op : gpu_injective_ops()) ops.push_back(op);
  return ops;
}

std::unique_ptr<Task> Task::create(const ops::Workload& workload, const Target& target) {
  const Template* tmpl = find_template(workload.op, target);
  if (tmpl == nullptr) {
    std::string known;
    for (const std::string& op : ops_with_templates(target)) known += (known.empty() ? "" : ", ") + op;
    throw UserError(str("no tuning template for op '", workload.op, "' on target '", target.to_string(),
                        "'; templates exist for: ", known.empty() ? "none on this target" : known));
  }
  std::unique_ptr<Task> task(new Task(workload, ops::instantiate(workload), target, tmpl));
  tmpl->define(task->space_, task->op_, task->workload_, task->target_);
  return task;
}

Task::Task(ops::Workload workload, ops::OpInstance op, Target target, const Template* tmpl)
    : workload_(std::move(workload)), op_(std::move(op)), target_(std::move(target)), template_(tmpl) {}

Config Task::default_config() const {
  Config c = template_->default_config(space_, op_, workload_, target_);
  TEMPER_CHECK(space_.is_valid(c), "template ", template_->name, "'s default config ", c.to_string(),
               " breaks the constraint: ", space_.why_invalid(c));
  return c;
}

Schedule Task::apply(const Config& config) const {
  TEMPER_CHECK(&config.space() == &space_, "Task::apply given a config of another task's space");
  return template_->apply(config, op_, workload_, target_);
}

NDArray pack_once(const PrepackedSchedule& p, const NDArray& original, const Target& target) {
  PrimFunc pack = p.pack.func();
  std::vector<int64_t> shape;
  for (const Expr& e : pack.params[1]->shape) {
    const int64_t* c = as_const_int(e);
    TEMPER_CHECK(c, "pack function ", pack.name, ": the packed array has a non-constant extent");
    shape.push_back(*c);
  }
  NDArray packed = NDArray::empty(shape, original.dtype());
  NDArray input = original;
  build({pack}, target).module->get_function(pack.name)({&input, &packed});
  return packed;
}

std::optional<PrepackedSchedule> Task::apply_prepacked(const Config& config) const {
  TEMPER_CHECK(&config.space() == &space_, "Task::apply_prepacked given a config of another task's space");
  if (!template_->prepacked) return std::nullopt;
  return template_->prepacked(config, op_, workload_, target_);
}

}  // namespace temper::schedule_space
