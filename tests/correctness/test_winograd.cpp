// Winograd's 3x3 convolution (ops/winograd.h) and its template: the transformed weight and
// the transforms compute the direct convolution (F(2x2) and F(4x4), tiles that overhang the
// output, channel counts that do not fill a block), and compiled code under the default,
// sampled and neighbouring configs matches the reference.
#include <gtest/gtest.h>

#include <random>

#include "compiler/ops/nchwc.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/winograd.h"
#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using template_testing::expect_correct;
using template_testing::expect_sampled_configs_correct;
using template_testing::task_of;
using template_testing::workload_test_name;

NDArray random_array(const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  NDArray a = NDArray::empty(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  float* p = a.data_as<float>();
  for (int64_t i = 0; i < a.size(); ++i) p[i] = dist(rng);
  return a;
}

struct Case {
  int64_t C, K, H, W, pad, m, block;
};

TEST(Winograd, TransformedWeightAndTransformsComputeTheDirectConvolution) {
  std::mt19937_64 rng(3);
  for (Case c : {Case{16, 16, 8, 8, 1, 4, 16}, Case{5, 19, 7, 7, 1, 4, 8}, Case{12, 8, 9, 6, 0, 2, 8},
                 Case{8, 8, 14, 14, 1, 2, 8}, Case{3, 4, 5, 11, 1, 4, 4}}) {
    SCOPED_TRACE(::testing::Message() << "C=" << c.C << " K=" << c.K << " " << c.H << "x" << c.W << " pad=" << c.pad
                                      << " m=" << c.m << " block=" << c.block);
    NDArray x = ops::block_channels(random_array({1, c.C, c.H, c.W}, rng), c.block);
    NDArray w = random_array({c.K, c.C, 3, 3}, rng);
    ops::Window2d window;
    window.padding = ops::Padding2d::uniform(c.pad);
    int64_t P = c.H + 2 * c.pad - 2, Q = c.W + 2 * c.pad - 2;
    int64_t Kb = ops::channel_blocks(c.K, c.block);
    NDArray direct = NDArray::zeros({1, Kb, P, Q, c.block}, DataType::float32());
    NDArray packed = ops::pack_conv_weight_nchwc(w, c.block, c.block);
    ops::reference::conv2d_nchwc(x.data_as<float>(), packed.data_as<float>(), direct.data_as<float>(), x.shape(),
                                 packed.shape(), window);
    NDArray u = ops::pack_winograd_weight_nchwc(w, c.m, c.block);
    NDArray winograd = NDArray::zeros(direct.shape(), DataType::float32());
    ops::reference::conv2d_winograd_nchwc(x.data_as<float>(), u.data_as<float>(), winograd.data_as<float>(),
                                          x.shape(), u.shape(), window.padding, c.m);
    const float* d = direct.data_as<float>();
    const float* v = winograd.data_as<float>();
    for (int64_t i = 0; i < direct.size(); ++i) ASSERT_NEAR(v[i], d[i], 1e-4 * (1 + std::abs(d[i]))) << "at " << i;
  }
}

TEST(Winograd, RefusesOtherTilesAndFilters) {
  EXPECT_THROW(ops::winograd_matrices(3), UserError);
  std::mt19937_64 rng(1);
  EXPECT_THROW(ops::pack_winograd_weight_nchwc(random_array({4, 4, 5, 5}, rng), 4, 4), UserError);
}

const char* kWorkloads[] = {
    "conv2d_winograd_nchwc:N=1,C=32,H=16,W=16,K=32,pad=1,block=16,tile=4",
    "conv2d_winograd_nchwc:N=1,C=20,H=7,W=7,K=24,pad=1,block=8,tile=4",
    "conv2d_winograd_nchwc:N=2,C=12,H=9,W=10,K=8,pad=0,block=8,tile=2",
    "conv2d_winograd_nchwc:N=1,C=16,H=14,W=14,K=16,pad=1,block=16,tile=2",
};

class WinogradTemplateDefaults : public ::testing::TestWithParam<const char*> {};

TEST_P(WinogradTemplateDefaults, DefaultConfigIsValidAndCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  EXPECT_EQ(task->tmpl().name, "conv2d_winograd_nchwc.cpu");
  Config c = task->default_config();
  EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
  expect_correct(*task, c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradTemplateDefaults, ::testing::ValuesIn(kWorkloads), workload_test_name);

// Below AVX-512 a block of 16 lanes takes two of 16 registers: the default's tile shrinks
// to fit, whatever machine runs the test.
TEST(WinogradTemplate, EveryDefaultFitsSixteenRegistersOnAvx2) {
  Target avx2 = Target::parse("llvm -mcpu=haswell");
  for (const char* w : kWorkloads) {
    std::unique_ptr<Task> task = task_of(w, avx2);
    Config c = task->default_config();
    EXPECT_TRUE(task->space().is_valid(c)) << w << ": " << c.to_string() << ": " << task->space().why_invalid(c);
  }
}

TEST(WinogradTemplate, SampledAndNeighbouringConfigsAreCorrect) {
  std::mt19937_64 rng(11);
  for (const char* w : kWorkloads) expect_sampled_configs_correct(*task_of(w), rng, 2);
  std::unique_ptr<Task> task = task_of(kWorkloads[1]);
  std::vector<Config> neighbours = task->space().neighbours(task->default_config());
  EXPECT_GE(neighbours.size(), 4u);
  for (const Config& c : neighbours) expect_correct(*task, c);
}

}  // namespace
}  // namespace temper::schedule_space
