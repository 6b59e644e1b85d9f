// The depthwise_conv2d template (NCHW): window_tile.h's tiled plane schedule -- an
// output tile of rows x columns in registers, vectorized over the columns, with the
// kernel window's loops outside it and (n, channel, row tile) parallel. Its knobs and
// default are window_tile.h's.
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/window_tile.h"

namespace temper::schedule_space {
namespace {

const char* kOp = "depthwise_conv2d";

ops::Shape output_shape(const ops::OpInstance& op) {
  return ops::static_shape(op.outputs[0], kOp);
}

void define_depthwise(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  if (w.get("layout") != "NCHW") {
    throw UserError(str("the depthwise_conv2d template serves layout=NCHW only, not layout=", w.get("layout")));
  }
  ops::Shape out = output_shape(op);
  define_window_tile(space, out[2], out[3], target);
}

Schedule apply_depthwise(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  WindowBlocks blocks{has_padding(w) ? str(kOp, "_pad") : "", kOp, ""};
  return apply_window_tile(c, op.func, blocks, target);
}

Config default_depthwise(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                         const Target& target) {
  ops::Shape out = output_shape(op);
  return default_window_tile(space, out[2], out[3], w.get_ints("stride").back(), target);
}

}  // namespace

const Template& depthwise_conv2d_template() {
  static const Template t{"depthwise_conv2d.cpu", define_depthwise, apply_depthwise, default_depthwise};
  return t;
}

}  // namespace temper::schedule_space
