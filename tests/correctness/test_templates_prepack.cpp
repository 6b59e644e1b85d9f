// Templates with a constant input packed ahead of time (Task::apply_prepacked): conv2d's
// weight under layout=NCHWc and the GEMM family's B under b_layout=KN or panels. The pack function
// runs once on a random weight, the compute function on the packed array, and the result
// must match the op's reference; configs that pack nothing, and templates without the
// hook, give nullopt.
#include <gtest/gtest.h>

#include <limits>

#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;
using template_testing::host;
using template_testing::task_of;

Config with_knob(const Task& task, const Config& c, const std::string& knob, const json& value) {
  json j = c.to_json();
  j["knobs"][knob] = value;
  return task.space().from_json(j);
}

std::vector<int64_t> static_shape_of(const Buffer& b) {
  std::vector<int64_t> shape;
  for (const Expr& e : b->shape) {
    const int64_t* c = as_const_int(e);
    EXPECT_NE(c, nullptr) << "a parameter of non-constant shape";
    shape.push_back(c != nullptr ? *c : 0);
  }
  return shape;
}

// Packs the op's input `p.input` with p.pack, computes with p.compute on the packed array,
// and checks the outputs against the reference.
void expect_prepacked_correct(const Task& task, const Config& config, uint64_t seed = 3) {
  std::optional<PrepackedSchedule> p = task.apply_prepacked(config);
  ASSERT_TRUE(p.has_value()) << task.workload().to_string() << " under " << config.to_string();
  ASSERT_EQ(p->input, 1);
  const PrimFunc& pack = p->pack.func();
  const PrimFunc& compute = p->compute.func();
  ASSERT_EQ(pack.params.size(), 2u);
  ASSERT_EQ(compute.params.size(), task.op().func.params.size());
  // pack: (the op's input, the packed array); compute: the op's parameters, that one replaced.
  EXPECT_EQ(static_shape_of(pack.params[0]), static_shape_of(task.op().func.params[1]));
  EXPECT_EQ(static_shape_of(pack.params[1]), static_shape_of(compute.params[1]));
  EXPECT_EQ(compute.name, task.op().func.name);

  BuildResult built = build({pack, compute}, host());
  ops::OpData data = ops::make_op_data(task.op(), seed);
  NDArray packed = NDArray::empty(static_shape_of(pack.params[1]), data.inputs[1].dtype());
  built.module->get_function(pack.name)({&data.inputs[1], &packed});
  for (NDArray& o : data.outputs) o.fill(o.dtype().is_float() ? std::numeric_limits<double>::quiet_NaN() : -123456789);
  std::vector<NDArray*> args = data.args();
  args[1] = &packed;
  built.module->get_function(compute.name)(args);
  Comparison cmp = ops::check_outputs(data);
  EXPECT_TRUE(cmp.ok()) << task.workload().to_string() << " under " << config.to_string() << ": " << cmp.message
                        << "\ncompute:\n"
                        << to_string(compute);
}

// The default config with the packing knob set, then sampled configs forced to pack.
void expect_packing_configs_correct(const Task& task, const std::string& knob, const json& packing, int draws) {
  expect_prepacked_correct(task, with_knob(task, task.default_config(), knob, packing));
  std::mt19937_64 rng(11);
  for (int draw = 0; draw < draws; ++draw) {
    Config c = with_knob(task, task.space().sample(rng), knob, packing);
    if (!task.space().is_valid(c)) continue;
    expect_prepacked_correct(task, c, draw);
  }
}

TEST(PrepackTemplates, Conv2dNchwcIsCorrect) {
  for (const char* w :
       {"conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1", "conv2d:N=2,C=8,H=15,W=13,K=24,R=3,S=3,stride=2,pad=0",
        "conv2d:N=1,C=5,H=9,W=9,K=13,R=3,S=2,stride=1x2,pad=1x0x0x1",
        "conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1,dtype=int32"}) {
    SCOPED_TRACE(w);
    expect_packing_configs_correct(*task_of(w), "layout", "NCHWc", 3);
  }
}

TEST(PrepackTemplates, GemmWithTransposedBIsCorrect) {
  for (const char* w : {"dense:M=19,N=40,K=24,bias=1,act=gelu", "dense:M=33,N=50,K=17,bias=1", "dense:M=12,N=40,K=16",
                        "matmul:M=10,N=24,K=12,transpose_b=1", "batch_matmul:B=2,M=9,N=16,K=8,transpose_b=1"}) {
    SCOPED_TRACE(w);
    expect_packing_configs_correct(*task_of(w), "b_layout", "KN", 4);
  }
  // Panels of nr columns, the last one partly past N (50 = 3 x 16 + 2; 1000 = 62 x 16 + 8).
  for (const char* w : {"dense:M=1,N=50,K=17,bias=1", "dense:M=3,N=40,K=24,act=relu", "dense:M=1,N=1000,K=64,bias=1"}) {
    SCOPED_TRACE(w);
    expect_packing_configs_correct(*task_of(w), "b_layout", "panels", 4);
  }
}

TEST(PrepackTemplates, MatmulWithBInPanelsIsCorrect) {
  // A [K, N] B packed into panels of nr columns, the last one partly past N.
  for (const char* w : {"matmul:M=20,N=50,K=17", "matmul:M=128,N=48,K=32", "matmul:M=9,N=24,K=12,transpose_a=1"}) {
    SCOPED_TRACE(w);
    expect_packing_configs_correct(*task_of(w), "b_layout", "panels", 4);
  }
  // As stored, nothing is packed.
  std::unique_ptr<Task> task = task_of("matmul:M=20,N=50,K=17");
  EXPECT_FALSE(task->apply_prepacked(with_knob(*task, task->default_config(), "b_layout", "KN")).has_value());
}

TEST(PrepackTemplates, DefaultConfigsPackWhereApplyPacks) {
  // ResNet-18's last 3x3 layer, a dense layer and a BERT-base projection: their defaults pack.
  std::unique_ptr<Task> conv = task_of("conv2d:N=1,C=64,H=7,W=7,K=64,R=3,S=3,pad=1");
  std::optional<PrepackedSchedule> p = conv->apply_prepacked(conv->default_config());
  ASSERT_TRUE(p.has_value());
  // The compute schedule is apply's less the packing stage's steps, which the pack
  // schedule takes; the packed weight is a parameter, no stage of the compute function.
  Schedule whole = conv->apply(conv->default_config());
  EXPECT_EQ(whole.trace().instructions().size(),
            p->compute.trace().instructions().size() + p->pack.trace().instructions().size());
  EXPECT_NE(to_string(whole.func()).find("block weight_pack"), std::string::npos);
  EXPECT_EQ(to_string(p->compute.func()).find("block weight_pack"), std::string::npos);
  EXPECT_NE(to_string(p->pack.func()).find("block weight_pack"), std::string::npos);

  std::unique_ptr<Task> dense = task_of("dense:M=16,N=64,K=32");
  ASSERT_EQ(dense->default_config().knob_string("b_layout"), "panels");
  p = dense->apply_prepacked(dense->default_config());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pack.func().name, "dense_W_pack");
  expect_prepacked_correct(*dense, dense->default_config());

  std::unique_ptr<Task> projection = task_of("matmul:M=128,N=768,K=768");
  ASSERT_EQ(projection->default_config().knob_string("b_layout"), "panels");
  EXPECT_TRUE(projection->apply_prepacked(projection->default_config()).has_value());
}

TEST(PrepackTemplates, ConfigsThatPackNothingGiveNullopt) {
  std::unique_ptr<Task> conv = task_of("conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1");
  EXPECT_FALSE(conv->apply_prepacked(with_knob(*conv, conv->default_config(), "layout", "NCHW")).has_value());
  std::unique_ptr<Task> dense = task_of("dense:M=12,N=40,K=16");
  EXPECT_FALSE(dense->apply_prepacked(with_knob(*dense, dense->default_config(), "b_layout", "NK")).has_value());
  // B stored [K, N] and read as stored: nothing to pack.
  std::unique_ptr<Task> matmul = task_of("matmul:M=16,N=32,K=16");
  EXPECT_FALSE(matmul->apply_prepacked(with_knob(*matmul, matmul->default_config(), "b_layout", "KN")).has_value());
  // No hook.
  std::unique_ptr<Task> depthwise = task_of("depthwise_conv2d:N=1,C=8,H=12,W=12,R=3,S=3,pad=1");
  EXPECT_FALSE(depthwise->tmpl().prepacked);
  EXPECT_FALSE(depthwise->apply_prepacked(depthwise->default_config()).has_value());
}

}  // namespace
}  // namespace temper::schedule_space
