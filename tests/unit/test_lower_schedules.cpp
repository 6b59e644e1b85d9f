// Programs built by schedule primitives, lowered with the verifier on and run by the
// test interpreter against their unscheduled definitions: tensorized tiles of a
// cache_write buffer, producers computed at loops that a split left with a tail, and
// the hand-written CPU schedules of the operator library.
#include <gtest/gtest.h>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/unroll_loops.h"
#include "compiler/ops/cpu_schedules.h"
#include "unit/test_lower_builders.h"
#include "unit/test_schedule_workloads.h"

namespace temper {
namespace {

using test::expect_same_results;

LowerOptions verified() {
  LowerOptions o;
  o.verify = true;
  return o;
}

// Calls of an sgemm micro-kernel become the loops the kernel runs, over the addresses
// and leading dimensions it is passed: C[c0 + r*ldc + j] += A[a0 + r*lda + p] * B[b0 +
// p*ldb + j]. The interpreter then checks each element the kernel would touch against
// its buffer's allocation.
class SgemmCallExpander : public IRMutator {
 public:
  SgemmCallExpander(std::string symbol, int mr, int nr) : symbol_(std::move(symbol)), mr_(mr), nr_(nr) {}
  using IRMutator::visit;
  int expanded = 0;

  Stmt visit(const EvaluateNode* op, const Stmt& self) override {
    auto* call = op->value.as<CallNode>();
    if (!call || call->call_kind != CallKind::Extern || call->name != symbol_) return self;
    auto operand = [&](int i) {
      auto* element = call->args[i].as<CallNode>()->args[0].as<BufferLoadNode>();
      return std::pair{element->buffer, element->indices[0]};
    };
    auto [c, c0] = operand(0);
    auto [a, a0] = operand(1);
    auto [b, b0] = operand(2);
    const std::vector<Expr>& args = call->args;
    Var r("r"), j("j"), p("p");
    Expr ci = c0 + r * args[6] + j;
    Stmt update = store(c, load(c, {ci}) + load(a, {a0 + r * args[4] + p}) * load(b, {b0 + p * args[5] + j}), {ci});
    ++expanded;
    return make_for(r, 0, mr_, ForKind::Serial,
                    make_for(j, 0, nr_, ForKind::Serial, make_for(p, 0, args[3], ForKind::Serial, update)));
  }

 private:
  std::string symbol_;
  int mr_, nr_;
};

// C accumulates in C_local tiles of mr x nr, each computed by the micro-kernel and
// written back after it.
Schedule tensorized_gemm(int m, int n, int k, int mr, int nr) {
  Schedule s(testing::matmul(m, n, k));
  BlockRV c = s.get_block("C");
  BlockRV write_back = s.cache_write(c, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, mr});
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, nr});
  s.reorder({i[0], j[0], loops[2], i[1], j[1]});
  s.reverse_compute_at(write_back, j[0]);
  s.decompose_reduction(c, loops[2]);
  s.tensorize(loops[2], str("sgemm_", mr, "x", nr));
  return s;
}

const AllocateNode* find_allocation(const Stmt& body, const std::string& name) {
  const AllocateNode* found = nullptr;
  post_order_visit(body, [&](const Node* n) {
    if (n->kind == NodeKind::Allocate && static_cast<const AllocateNode*>(n)->buffer->name == name) {
      found = static_cast<const AllocateNode*>(n);
    }
  });
  return found;
}

const CallNode* find_call(const Stmt& body, const std::string& name) {
  const CallNode* found = nullptr;
  post_order_visit(body, [&](const Node* n) {
    if (n->kind == NodeKind::Call && static_cast<const CallNode*>(n)->name == name) {
      found = static_cast<const CallNode*>(n);
    }
  });
  return found;
}

// The kernel reaches C_local through its address and ldc = N: the buffer keeps the row
// length N (and all its rows, since the rows the kernel touches are not in the IR).
TEST(LowerSchedules, TensorizedCacheWriteTileKeepsTheLayoutTheKernelIsGiven) {
  for (int nr : {32, 16}) {
    SCOPED_TRACE(str("sgemm_6x", nr));
    const int m = 18, n = 64, k = 7;
    Schedule s = tensorized_gemm(m, n, k, 6, nr);
    PrimFunc g = lower(s.func(), verified());
    std::string symbol = str("temper_ukernel_sgemm_6x", nr);
    const AllocateNode* tile = find_allocation(g.body, "C_local");
    const CallNode* call = find_call(g.body, symbol);
    ASSERT_NE(tile, nullptr) << g;
    ASSERT_NE(call, nullptr) << g;
    ASSERT_EQ(tile->buffer.ndim(), 1);
    EXPECT_TRUE(is_const_int(tile->buffer->shape[0], m * n)) << g;
    auto* c_operand = call->args[0].as<CallNode>()->args[0].as<BufferLoadNode>();
    EXPECT_TRUE(c_operand->buffer.same_as(tile->buffer)) << g;
    EXPECT_TRUE(is_const_int(call->args[6], n)) << "ldc of " << g;

    SgemmCallExpander expander(symbol, 6, nr);
    PrimFunc runnable = expander.mutate(g);
    EXPECT_EQ(expander.expanded, 1);
    expect_same_results(testing::matmul(m, n, k), runnable);
  }
}

// The smallest case of a producer in a loop that partition_loops splits: the tail
// iteration gets its own copy of B's allocation, and storage_rewrite promotes each copy
// with the accesses inside it.
TEST(LowerSchedules, ProducerComputedAtALoopWithATail) {
  PrimFunc f = testing::scale_add(30, 20);
  Schedule s(f);
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, 8});
  s.compute_at(s.get_block("B"), i[0]);
  PrimFunc g = lower(s.func(), verified());
  EXPECT_EQ(to_string(g), R"(func scale_add(A: float32[30, 20], C: float32[30, 20]) {
  for (i_o, 0, 3) {
    allocate B: float32[160] in local
    for (ax0, 0, 8) {
      for (ax1, 0, 20) {
        B[ax0 * 20 + ax1] = A[i_o * 160 + ax0 * 20 + ax1] * 2.0f
      }
    }
    for (i_i, 0, 8) {
      for (j, 0, 20) {
        C[i_o * 160 + i_i * 20 + j] = B[i_i * 20 + j] + 1.0f
      }
    }
  }
  allocate B_1: float32[160] in local
  for (ax0, 0, 6) {
    for (ax1, 0, 20) {
      B_1[ax0 * 20 + ax1] = A[ax0 * 20 + ax1 + 480] * 2.0f
    }
  }
  for (i_i, 0, 6) {
    for (j, 0, 20) {
      C[i_i * 20 + j + 480] = B_1[i_i * 20 + j] + 1.0f
    }
  }
}
)");
  expect_same_results(f, g);
}

TEST(LowerSchedules, CacheReadComputedAtALoopWithATail) {
  PrimFunc f = testing::matmul(30, 48, 17);
  for (int operand : {1, 2}) {  // A, then B
    SCOPED_TRACE(operand == 1 ? "A_global" : "B_global");
    Schedule s(f);
    BlockRV c = s.get_block("C");
    BlockRV copy = s.cache_read(c, operand, "global");
    BlockRV write_back = s.cache_write(c, 0, "local");
    std::vector<LoopRV> loops = s.get_loops(c);
    std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, 8});
    s.compute_at(copy, i[0]);
    s.reverse_compute_at(write_back, i[0]);
    expect_same_results(f, lower(s.func(), verified()));
  }
}

// Unrolling copies an allocation as partitioning does.
TEST(LowerSchedules, ProducerComputedAtAnUnrolledLoop) {
  PrimFunc f = testing::scale_add(4, 6);
  Schedule s(f);
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  s.compute_at(s.get_block("B"), loops[0]);
  s.annotate(loops[0], kAutoUnrollMaxStep, int64_t{64});
  PrimFunc g = lower(s.func(), verified());
  std::string text = to_string(g);
  EXPECT_NE(text.find("allocate B_3: float32[6] in local\n  B_3[0] = A[18] * 2.0f\n"), std::string::npos) << text;
  expect_same_results(f, g);
}

struct OpCase {
  std::string workload;
  std::string schedule;
  Schedule (*fn)(const ops::OpInstance&);
};

class LowerCpuSchedules : public ::testing::TestWithParam<OpCase> {};

TEST_P(LowerCpuSchedules, ComputeWhatTheDefinitionDoes) {
  const OpCase& c = GetParam();
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(c.workload));
  Schedule s = c.fn(op);
  // The default softmax sums its rows by lanes (rfactor): the same float32 sums in another
  // order.
  expect_same_results(op.func, lower(s.func(), verified()), 1e-6);
}

std::vector<OpCase> op_cases() {
  // The first three divide evenly by the schedules' tiles; the others leave tails.
  const char* workloads[] = {"matmul:M=30,N=48,K=17", "conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,pad=1",
                             "softmax:shape=8x64,axis=1", "matmul:M=31,N=45,K=17", "softmax:shape=7x37,axis=1"};
  std::vector<OpCase> cases;
  for (const char* w : workloads) {
    cases.push_back({w, "default", &ops::schedule_cpu_default});
    cases.push_back({w, "tiled", &ops::schedule_cpu_tiled});
    cases.push_back({w, "staged", &ops::schedule_cpu_staged});
  }
  return cases;
}

std::string op_case_name(const ::testing::TestParamInfo<OpCase>& info) {
  std::string name = info.param.workload + "_" + info.param.schedule;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ops, LowerCpuSchedules, ::testing::ValuesIn(op_cases()), op_case_name);

}  // namespace
}  // namespace temper
