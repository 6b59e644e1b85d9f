// The pooling GPU templates (max_pool2d, avg_pool2d; NCHW and NHWC): one thread per
// output element, TVM's schedule_pool. The padding is computed inline where the window
// reads it, the window's reduction accumulates in a register, and the output's loops are
// fused into one, split into [blocks, threads] and bound to blockIdx.x and threadIdx.x;
// avg_pool2d's division by the window's count is fused into the write-back.
//
//   threads  threads per block: 32 to 1024, powers of two
//   auto_unroll_max_step   gpu_tiling.h: unrolls the kernel window's loops
//
// The default config is 256 threads with the window unrolled up to 64 steps.
#include "schedule_space/gpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/gpu_tiling.h"

namespace temper::schedule_space {
namespace {

Template gpu_pool_template(const std::string& op, bool is_average) {
  auto define = [](ConfigSpace& space, const ops::OpInstance& inst, const ops::Workload&, const Target& target) {
    define_threads(space);
    define_auto_unroll(space);
    int64_t bytes = inst.outputs[0].dtype().bytes();
    BlockUsage usage;
    usage.threads = [](const Config& c) { return ThreadExtents{c.knob_int(kThreadsKnob), 1, 1}; };
    usage.local_bytes = [bytes](const Config&) { return bytes; };
    add_limit_constraints(space, target, usage);
  };
  auto apply = [op, is_average](const Config& c, const ops::OpInstance& inst, const ops::Workload& w, const Target&) {
    Schedule s(inst.func);
    if (has_padding(w)) s.compute_inline(s.get_block(op + "_pad"));
    BlockRV reduce = s.get_block(is_average ? op + "_sum" : op);
    BlockRV write_back = s.cache_write(reduce, 0, "local");
    if (is_average) {
      // The division reads the register: the sums never reach global memory.
      s.compute_inline(write_back);
      write_back = s.get_block(op);
    }
    std::vector<LoopRV> loops = s.get_loops(reduce);  // n, the three other output axes, ry, rx
    LoopRV fused = s.fuse({loops[0], loops[1], loops[2], loops[3]});
    std::vector<LoopRV> parts = s.split(fused, {std::nullopt, c.knob_int(kThreadsKnob)});
    s.bind(parts[0], "blockIdx.x");
    s.bind(parts[1], "threadIdx.x");
    s.reverse_compute_at(write_back, parts[1]);
    s.decompose_reduction(reduce, loops[4]);
    apply_auto_unroll(s, parts[0], c);
    return s;
  };
  auto default_config = [](const ConfigSpace& space, const ops::OpInstance&, const ops::Workload&, const Target&) {
    return space.from_json({{"knobs", {{kThreadsKnob, kDefaultThreads}, {kAutoUnrollKnob, 64}}}});
  };
  return Template{op + ".gpu", define, apply, default_config};
}

}  // namespace

const Template& gpu_max_pool2d_template() {
  static const Template t = gpu_pool_template("max_pool2d", false);
  return t;
}

const Template& gpu_avg_pool2d_template() {
  static const Template t = gpu_pool_template("avg_pool2d", true);
  return t;
}

}  // namespace temper::schedule_space
