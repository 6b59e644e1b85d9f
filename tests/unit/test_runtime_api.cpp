// The C runtime API that generated code calls: errors, the parallel loop, threads,
// allocation and the argument checks.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "compiler/runtime/block_cache.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/runtime_symbols.h"
#include "compiler/runtime/thread_pool.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // When set, iteration 0 waits (10 s at most) until the second half has started: the loop
  // then finishes early only if another thread ran that half.
  bool wait_for_second_half = false;
  std::atomic<bool> second_half_started{false};
  explicit Counts(int64_t n) : hits(n) {}
};

int32_t count_iteration(int64_t i, void* closure) {
  auto* counts = static_cast<Counts*>(closure);
  ++counts->hits[i];
  {
    std::lock_guard<std::mutex> lock(counts->mutex);
    counts->threads.insert(std::this_thread::get_id());
  }
  int64_t n = static_cast<int64_t>(counts->hits.size());
  if (i == n / 2) counts->second_half_started = true;
  if (i == 0 && counts->wait_for_second_half) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!counts->second_half_started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
  return 0;
}

TEST(RuntimeApi, ParallelForRunsEveryIterationOnceOnSeveralThreads) {
  temper_set_num_threads(2);
  Counts counts(1000);
  counts.wait_for_second_half = true;
  EXPECT_EQ(temper_parallel_for(1000, count_iteration, &counts), 0);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(counts.hits[i], 1) << i;
  EXPECT_TRUE(counts.second_half_started);
  EXPECT_EQ(counts.threads.size(), 2u);
  temper_set_num_threads(0);
}

// Three rounds of `before`, then a loop of 100 iterations on 2 threads: each round must run
// every iteration once on both threads, whether the workers were spinning or asleep.
void expect_loops_wake_both_threads(const std::function<void()>& before) {
  temper_set_num_threads(2);
  for (int round = 0; round < 3; ++round) {
    before();
    Counts counts(100);
    counts.wait_for_second_half = true;
    EXPECT_EQ(temper_parallel_for(100, count_iteration, &counts), 0);
    for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(counts.hits[i], 1) << i;
    EXPECT_EQ(counts.threads.size(), 2u) << "round " << round;
  }
  temper_set_num_threads(0);
}

TEST(RuntimeApi, ParallelForWakesWorkersThatStoppedSpinningAndSlept) {
  // The workers spin 10 ms for the next loop, then sleep: a loop 30 ms after the last one
  // must wake them.
  expect_loops_wake_both_threads([] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
}

TEST(RuntimeApi, ParallelForAfterThePoolWasToldToRestWakesItsWorkers) {
  expect_loops_wake_both_threads([] {
    temper::pool_rest();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
}

TEST(RuntimeApi, ParallelForOfNothingRunsNothing) {
  Counts counts(1);
  EXPECT_EQ(temper_parallel_for(0, count_iteration, &counts), 0);
  EXPECT_EQ(counts.hits[0], 0);
}

int32_t fail_at_seven(int64_t i, void*) {
  if (i != 7) return 0;
  temper_set_last_error("iteration 7 failed");
  return 3;
}

TEST(RuntimeApi, ParallelForReturnsAFailureWithItsMessageOnTheCallingThread) {
  temper_set_num_threads(2);
  temper_set_last_error("");
  EXPECT_EQ(temper_parallel_for(100, fail_at_seven, nullptr), 3);
  EXPECT_STREQ(temper_get_last_error(), "iteration 7 failed");
  temper_set_num_threads(0);
}

int32_t nested_body(int64_t, void* closure) {
  // An inner parallel loop runs serially on the outer loop's thread.
  return temper_parallel_for(10, count_iteration, closure);
}

TEST(RuntimeApi, NestedParallelForRunsInnerLoopsSerially) {
  temper_set_num_threads(2);
  Counts counts(10);
  EXPECT_EQ(temper_parallel_for(4, nested_body, &counts), 0);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(counts.hits[i], 4);
  temper_set_num_threads(0);
}

TEST(RuntimeApi, NumThreadsDefaultsToTheCores) {
  temper_set_num_threads(3);
  EXPECT_EQ(temper_get_num_threads(), 3);
  temper_set_num_threads(0);
  EXPECT_EQ(temper_get_num_threads(), omp_get_num_procs());
}

TEST(RuntimeApi, ErrorsArePerThread) {
  temper_set_last_error("main thread");
  std::thread([] {
    EXPECT_STREQ(temper_get_last_error(), "");
    temper_set_last_error("worker");
  }).join();
  EXPECT_STREQ(temper_get_last_error(), "main thread");
}

TEST(RuntimeApi, AllocIsAlignedAndFailsCleanly) {
  for (int64_t bytes : {0, 1, 63, 64, 1000}) {
    void* p = temper_alloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    std::memset(p, 0xab, static_cast<size_t>(bytes));
    temper_free(p);
  }
  EXPECT_EQ(temper_alloc(int64_t{1} << 62), nullptr);
  EXPECT_NE(std::string(temper_get_last_error()).find("out of memory: cannot allocate"), std::string::npos);
  EXPECT_EQ(temper_alloc(-1), nullptr);
  EXPECT_NE(std::string(temper_get_last_error()).find("negative size -1"), std::string::npos);
}

// A kernel allocates its temporaries on every call: a freed block comes back for the next
// allocation of its size on the thread, within the cache's bounds.
TEST(RuntimeApi, AFreedBlockIsReusedForTheSameSize) {
  std::thread([] {
    void* a = temper_alloc(200000);
    temper_free(a);
    EXPECT_EQ(temper::runtime::cached_bytes(), 200704u);  // 49 pages of 4 KiB
    void* b = temper_alloc(199000);                         // the same size class
    EXPECT_EQ(b, a);
    EXPECT_EQ(temper::runtime::cached_bytes(), 0u);
    void* c = temper_alloc(300000);
    EXPECT_NE(c, a);
    temper_free(b);
    temper_free(c);
    // Over the bounds: a block too big to keep, and more blocks than the cache holds.
    temper_free(temper_alloc(static_cast<int64_t>(temper::runtime::kMaxBlockBytes) + 1));
    std::vector<void*> many;
    for (size_t k = 0; k < temper::runtime::kMaxBlocks + 3; ++k) many.push_back(temper_alloc(4096 * (k + 1)));
    for (void* p : many) temper_free(p);
    size_t newest = 0;
    for (size_t k = 3; k < temper::runtime::kMaxBlocks + 3; ++k) newest += 4096 * (k + 1);
    EXPECT_EQ(temper::runtime::cached_bytes(), newest);
  }).join();
}

// An array allocated on one thread may be freed on another.
TEST(RuntimeApi, ABlockMayBeFreedOnAnotherThread) {
  void* p = temper_alloc(100000);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 100000);
  std::thread([p] {
    temper_free(p);
    EXPECT_EQ(temper::runtime::cached_bytes(), 102400u);
  }).join();
}

TEST(RuntimeApi, ArgumentChecksDescribeTheMismatch) {
  alignas(64) static float data[12];
  const int64_t shape[] = {3, 4};
  TemperTensor t{data, 2, shape, nullptr, TEMPER_DTYPE_FLOAT, 32, 1, TEMPER_DEVICE_CPU, 0};
  EXPECT_EQ(temper_check_tensor_header("f", &t, 0, "X", 2, TEMPER_DTYPE_FLOAT, 32, 64), 0);
  const int64_t expected[] = {3, 4};
  EXPECT_EQ(temper_check_tensor_shape("f", &t, 0, "X", expected), 0);

  EXPECT_EQ(temper_check_num_args("f", 1, 2), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: expected 2 arguments, got 1");
  EXPECT_EQ(temper_check_tensor_header("f", &t, 0, "X", 2, TEMPER_DTYPE_INT, 8, 64), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: argument 0 (X): expected dtype int8, got float32");
  const int64_t other[] = {3, 5};
  EXPECT_EQ(temper_check_tensor_shape("f", &t, 0, "X", other), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: argument 0 (X): expected shape [3, 5], got [3, 4]");
  TemperTensor gpu = t;
  gpu.device_type = TEMPER_DEVICE_CUDA;
  EXPECT_EQ(temper_check_tensor_header("f", &gpu, 0, "X", 2, TEMPER_DTYPE_FLOAT, 32, 64), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: argument 0 (X): expected a CPU tensor, got device type 2");
  TemperTensor vector = t;
  vector.lanes = 4;
  EXPECT_EQ(temper_check_tensor_header("f", &vector, 0, "X", 2, TEMPER_DTYPE_FLOAT, 32, 64), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: argument 0 (X): expected dtype float32, got float32x4");
  // Strides of a compact tensor (and any stride on an extent-1 dimension) pass.
  const int64_t compact[] = {4, 1};
  TemperTensor strided = t;
  strided.strides = compact;
  EXPECT_EQ(temper_check_tensor_header("f", &strided, 0, "X", 2, TEMPER_DTYPE_FLOAT, 32, 64), 0);
  TemperTensor null_data = t;
  null_data.data = nullptr;
  EXPECT_EQ(temper_check_tensor_header("f", &null_data, 0, "X", 2, TEMPER_DTYPE_FLOAT, 32, 64), -1);
  EXPECT_STREQ(temper_get_last_error(), "f: argument 0 (X): the data pointer is NULL");
}

TEST(RuntimeApi, RuntimeSymbolsNameEveryFunctionAndTheMicroKernels) {
  std::set<std::string> names;
  for (const auto& [name, address] : temper::runtime_symbols()) {
    EXPECT_NE(address, nullptr) << name;
    names.insert(name);
  }
  for (const char* name :
       {"temper_set_last_error", "temper_get_last_error", "temper_parallel_for", "temper_set_num_threads",
        "temper_get_num_threads", "temper_alloc", "temper_free", "temper_check_num_args", "temper_check_tensor_header",
        "temper_check_tensor_shape", "temper_ukernel_sgemm_6x32"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

}  // namespace
