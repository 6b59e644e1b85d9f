// The injective GPU template: ops computed in one stage with no reduction, each output
// element from its own inputs (elementwise, broadcast, data movement). The output's
// loops are fused into one, split into [blocks, threads, vector] and bound to blockIdx.x
// and threadIdx.x, the innermost `vector` elements of a thread vectorized.
//
//   threads  threads per block: 32 to 1024, powers of two; the last block's threads
//            past the end do nothing
//   vector   elements per thread, one vector: a width of the kind's vector types that
//            divides the output's innermost extent, so that a vector is contiguous
//
// The default config is 256 threads and the widest vector up to 4 lanes.
#include <map>

#include "compiler/ops/shape.h"
#include "schedule_space/gpu_templates.h"
#include "schedule_space/templates/gpu_tiling.h"

namespace temper::schedule_space {
namespace {

int64_t innermost_extent(const ops::OpInstance& op) {
  return ops::static_shape(op.outputs[0], op.name).back();
}

void define_injective(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  const te::OperationNode& stage = *op.outputs[0].op();
  bool one_stage = stage.kind == te::OperationNode::Kind::Compute && stage.tag != "reduction";
  for (const te::Tensor& input : stage.inputs) one_stage &= input.op()->kind == te::OperationNode::Kind::Placeholder;
  TEMPER_CHECK(one_stage, "gpu_injective_ops lists ", w.op, ", which is not computed in one stage without reduction");
  define_threads(space);
  space.define_knob("vector", vector_widths_dividing(target, {innermost_extent(op)}));
  BlockUsage usage;
  usage.threads = [](const Config& c) { return ThreadExtents{c.knob_int(kThreadsKnob), 1, 1}; };
  usage.local_bytes = [](const Config&) { return int64_t{0}; };
  add_limit_constraints(space, target, usage);
}

Schedule apply_injective(const Config& c, const ops::OpInstance& op, const ops::Workload&, const Target&) {
  Schedule s(op.func);
  std::vector<LoopRV> loops = s.get_loops(s.get_block(op.outputs[0].name()));
  LoopRV fused = loops.size() == 1 ? loops[0] : s.fuse(loops);
  int64_t vector = c.knob_int("vector");
  if (vector > 1) {
    std::vector<LoopRV> v = s.split(fused, {std::nullopt, vector});
    s.vectorize(v[1]);
    fused = v[0];
  }
  // Split outside the vector loop: the last block's guard is the same for every lane.
  std::vector<LoopRV> parts = s.split(fused, {std::nullopt, c.knob_int(kThreadsKnob)});
  s.bind(parts[0], "blockIdx.x");
  s.bind(parts[1], "threadIdx.x");
  return s;
}

Config default_injective(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload&, const Target&) {
  int64_t vector = 1;
  for (int64_t v : {2, 4}) {
    if (innermost_extent(op) % v == 0) vector = v;
  }
  return space.from_json({{"knobs", {{kThreadsKnob, kDefaultThreads}, {"vector", vector}}}});
}

}  // namespace

const Template& gpu_injective_template(const std::string& op) {
  static const std::map<std::string, Template> templates = [] {
    std::map<std::string, Template> m;
    for (const std::string& name : gpu_injective_ops()) {
      m[name] = Template{name + ".gpu", define_injective, apply_injective, default_injective};
    }
    return m;
  }();
  auto it = templates.find(op);
  TEMPER_CHECK(it != templates.end(), "no injective GPU template for ", op);
  return it->second;
}

const std::vector<std::string>& gpu_injective_ops() {
  static const std::vector<std::string> ops = {
      "add",  "sub", "mul",  "div",        "maximum",    "minimum",   "relu",    "relu6", "sigmoid", "tanh",
      "gelu", "exp", "sqrt", "scale_bias", "batch_norm", "transpose", "reshape", "pad",   "concat"};
  return ops;
}

}  // namespace temper::schedule_space
