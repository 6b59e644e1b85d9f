// Fused attention (ops/attention.h) and its template: compiled code under the default,
// sampled and every register-tile config matches the reference (the unfused softmax of the
// scores, in double), in both layouts (the heads' transposed, or not), without a mask and
// with masks of zeros, of rows masked in full
// (finite and float-lowest biases: no NaN where the reference has none), of some keys at
// -inf, and of random values; shapes whose keys and columns fill no whole vector too.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using template_testing::expect_correct;
using template_testing::expect_sampled_configs_correct;
using template_testing::host;
using template_testing::task_of;
using template_testing::workload_test_name;

const char* kWorkloads[] = {
    "attention:B=12,S=128,T=128,D=64,E=64,scale=0.125",
    "attention:B=12,S=128,T=128,D=32,E=32,scale=0.17677669529663687,mask_rows=1",
    "attention:B=4,S=16,T=48,D=16,E=32,mask_rows=2",
    "attention:B=3,S=7,T=20,D=8,E=12,scale=0.5,mask_rows=3",
    "attention:B=2,S=5,T=3,D=4,E=5,mask_rows=1",
    // The heads' layout: q, k, v and out as the projections lay them out, no transposes.
    "attention:B=12,S=128,T=128,D=32,E=32,scale=0.17677669529663687,mask_rows=1,heads=12",
    "attention:B=6,S=10,T=20,D=8,E=12,scale=0.5,mask_rows=2,heads=3",
    "attention:B=4,S=3,T=5,D=4,E=4,heads=4",
};

class AttentionTemplate : public ::testing::TestWithParam<const char*> {};

TEST_P(AttentionTemplate, DefaultConfigIsValidAndCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  EXPECT_EQ(task->tmpl().name, "attention.cpu");
  Config c = task->default_config();
  EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
  expect_correct(*task, c);
}

TEST_P(AttentionTemplate, SampledConfigsAreCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  std::mt19937_64 rng(11);
  expect_sampled_configs_correct(*task, rng, 4);
}

INSTANTIATE_TEST_SUITE_P(Workloads, AttentionTemplate, ::testing::ValuesIn(kWorkloads), workload_test_name);

TEST(AttentionTemplate, EveryRegisterTileIsCorrect) {
  std::unique_ptr<Task> task = task_of("attention:B=2,S=8,T=64,D=16,E=64,scale=0.25,mask_rows=1");
  int checked = 0;
  for (int64_t i = 0; i < task->space().size(); ++i) {
    Config c = task->space().get(i);
    if (!task->space().is_valid(c)) continue;
    expect_correct(*task, c, static_cast<uint64_t>(i));
    ++checked;
  }
  EXPECT_GT(checked, 8);
}

// The kernel of the default config on q, kt, v from the op's test data and the given mask,
// against the reference on the same arrays: equal within fp32 tolerances, NaN exactly where
// the reference has NaN.
void expect_masked_rows_correct(const std::string& workload, const std::function<float(int64_t row, int64_t key)>& mask,
                                double tolerance = 1e-4) {
  std::unique_ptr<Task> task = task_of(workload);
  Schedule s = task->apply(task->default_config());
  BuildResult built = build({s.func()}, host());
  ops::OpData data = ops::make_op_data(task->op(), 5);
  NDArray& m = data.inputs[3];
  int64_t keys = m.shape()[1];
  for (int64_t r = 0; r < m.shape()[0]; ++r) {
    for (int64_t k = 0; k < keys; ++k) m.data_as<float>()[r * keys + k] = mask(r, k);
  }
  std::vector<const void*> ins;
  for (const NDArray& in : data.inputs) ins.push_back(in.data());
  task->op().reference(ins, {data.expected[0].data()});
  data.outputs[0].fill(0.0);
  built.module->get_function(task->op().func.name)(data.args());
  const float* got = data.outputs[0].data_as<float>();
  const float* want = data.expected[0].data_as<float>();
  for (int64_t i = 0; i < data.outputs[0].size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << workload << ": element " << i << " is " << got[i] << ", the reference NaN";
      continue;
    }
    ASSERT_FALSE(std::isnan(got[i])) << workload << ": element " << i << " is NaN, the reference " << want[i];
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::abs(want[i]))) << workload << ": element " << i;
  }
}

void expect_masks_correct(const std::string& w);

TEST(AttentionMasks, ZerosRowsMaskedInFullInfinitiesAndRandomValues) {
  for (const std::string w : {"attention:B=6,S=12,T=32,D=16,E=16,scale=0.25,mask_rows=3",
                              "attention:B=6,S=12,T=32,D=16,E=16,scale=0.25,mask_rows=3,heads=2"}) {
    expect_masks_correct(w);
  }
}

void expect_masks_correct(const std::string& w) {
  SCOPED_TRACE(w);
  float lowest = std::numeric_limits<float>::lowest();
  float inf = std::numeric_limits<float>::infinity();
  SCOPED_TRACE("zeros");
  expect_masked_rows_correct(w, [](int64_t, int64_t) { return 0.0f; });
  // Mask row 1 masks every key (batch entries 2 and 3): the exporters' -10000, and the
  // float minimum some write instead; row 0 masks the last quarter of the keys. A float32
  // logit of -10000 + s keeps s to within 0.0005 (the reference's double keeps it all), so
  // the rows masked in full agree to that, as onnxruntime's float32 softmax would.
  expect_masked_rows_correct(
      w, [](int64_t r, int64_t k) { return r == 1 || (r == 0 && k >= 24) ? -10000.0f : 0.0f; }, 1e-3);
  expect_masked_rows_correct(w, [&](int64_t r, int64_t k) { return r == 1 || (r == 0 && k >= 24) ? lowest : 0.0f; });
  // Some keys at -inf leave the others' softmax finite; a row of -inf only is NaN, as the
  // reference (and onnxruntime's Softmax) makes it.
  expect_masked_rows_correct(w, [&](int64_t r, int64_t k) { return k % 3 == 0 ? -inf : 0.0f; });
  expect_masked_rows_correct(w, [&](int64_t r, int64_t) { return r == 2 ? -inf : 0.0f; });
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0, 4);
  SCOPED_TRACE("random");
  expect_masked_rows_correct(w, [&](int64_t, int64_t) { return normal(rng); });
}

TEST(Attention, RefusesShapesThatDoNotFit) {
  EXPECT_THROW(task_of("attention:B=6,S=4,T=8,D=4,E=4,mask_rows=4"), UserError);  // 4 does not divide 6
  EXPECT_THROW(ops::Workload::parse("attention:B=6,S=4,T=8,D=4"), UserError);       // E missing
}

}  // namespace
}  // namespace temper::schedule_space
