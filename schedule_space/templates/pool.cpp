// The pooling templates (max_pool2d, avg_pool2d; NCHW): window_tile.h's tiled plane
// schedule -- an output tile of rows x columns in registers, vectorized over the columns,
// with the kernel window's loops outside it and (n, channel, row tile) parallel. For
// avg_pool2d the division by the window's count is fused into the tile's write-back.
// Knobs and default are window_tile.h's.
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/window_tile.h"

namespace temper::schedule_space {
namespace {

Template pool_template(const std::string& op, bool is_average) {
  auto output_shape = [op](const ops::OpInstance& inst) { return ops::static_shape(inst.outputs[0], op); };
  auto define = [op, output_shape](ConfigSpace& space, const ops::OpInstance& inst, const ops::Workload& w,
                                   const Target& target) {
    if (w.get("layout") != "NCHW") {
      throw UserError(str("the ", op, " template serves layout=NCHW only, not layout=", w.get("layout")));
    }
    ops::Shape out = output_shape(inst);
    define_window_tile(space, out[2], out[3], target);
  };
  auto apply = [op, is_average](const Config& c, const ops::OpInstance& inst, const ops::Workload& w,
                                const Target& target) {
    WindowBlocks blocks;
    blocks.pad = has_padding(w) ? op + "_pad" : "";
    blocks.reduce = is_average ? op + "_sum" : op;
    blocks.epilogue = is_average ? op : "";
    return apply_window_tile(c, inst.func, blocks, target);
  };
  auto default_config = [output_shape](const ConfigSpace& space, const ops::OpInstance& inst, const ops::Workload& w,
                                       const Target& target) {
    ops::Shape out = output_shape(inst);
    return default_window_tile(space, out[2], out[3], w.get_ints("stride").back(), target);
  };
  return Template{op + ".cpu", define, apply, default_config};
}

}  // namespace

const Template& max_pool2d_template() {
  static const Template t = pool_template("max_pool2d", false);
  return t;
}

const Template& avg_pool2d_template() {
  static const Template t = pool_template("avg_pool2d", true);
  return t;
}

}  // namespace temper::schedule_space
