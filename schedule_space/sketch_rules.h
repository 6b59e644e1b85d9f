// What the built-in sketch rules of the CPU (sketch_rules.cpp) and the GPU
// (sketch_rules_gpu.cpp) share. Internal to schedule_space/: users see sketch_rule.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "schedule_space/sketch_rule.h"

namespace temper::schedule_space {

// Inlines a strictly inlinable stage (not one a rule keeps).
std::shared_ptr<const SketchRule> always_inline_rule();
// Leaves a stage as it is: the last rule of every list.
std::shared_ptr<const SketchRule> skip_stage_rule();
// The GPU's rules in priority order.
SketchRules gpu_sketch_rules();

// The single consumer multi-level tiling can fuse: elementwise on the stage's output.
std::optional<std::string> fusible_consumer(const Schedule& s, const StageFacts& stage);

}  // namespace temper::schedule_space
