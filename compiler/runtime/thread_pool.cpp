#include "compiler/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace temper {
namespace {

thread_local bool in_parallel_region = false;

// A worker waits for the next loop by spinning, then sleeps: waking a sleeping thread
// costs 50-70 us on this project's virtual machines, and loops come back to back within a
// model, as runs do in a serving loop. Spinning 10 ms instead of 50 us made MobileNetV2
// runs 5% faster (12 interleaved processes, medians). onnxruntime's workers spin 2^20
// pauses, about 25 ms here. A yield between pauses lost that gain. TEMPER_SPIN_US sets
// the wait in microseconds (0: sleep at once).
constexpr std::chrono::microseconds kDefaultWait{10000};

std::chrono::microseconds wait_before_sleeping() {
  if (const char* env = std::getenv("TEMPER_SPIN_US"); env && *env) {
    char* end = nullptr;
    long long us = std::strtoll(env, &end, 10);
    if (*end == '\0' && us >= 0) return std::chrono::microseconds(us);
    std::fprintf(stderr, "warning: TEMPER_SPIN_US='%s' is not a number of microseconds; the workers wait %lld us\n",
                 env, static_cast<long long>(kDefaultWait.count()));
  }
  return kDefaultWait;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or `limit` has passed; returns done().
template <typename Done>
bool spin_until(const Done& done, std::chrono::microseconds limit) {
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  for (uint64_t spin = 1; !done(); ++spin) {
    cpu_relax();
    if (spin % 64 == 0 && clock::now() - start >= limit) return done();  // the clock every 64 pauses, about 1.6 us
  }
  return true;
}

// One parallel loop. Shared with the workers by shared_ptr: a worker that wakes after the
// caller returned still holds a valid job, and finds no range left to claim.
struct Job {
  int64_t n = 0;
  int ranges = 0;
  const std::function<int32_t(int64_t, int64_t)>* range = nullptr;  // valid while a range is unfinished
  std::atomic<int> next{0};      // the next range to claim
  std::atomic<int> finished{0};  // ranges done
  std::atomic<int32_t> status{0};

  // Claims and runs ranges until none is left.
  void work() {
    for (int r = next.fetch_add(1); r < ranges; r = next.fetch_add(1)) {
      int64_t begin = n * r / ranges, end = n * (r + 1) / ranges;
      if (status.load(std::memory_order_relaxed) == 0) {
        int32_t s = (*range)(begin, end);
        int32_t none = 0;
        if (s != 0) status.compare_exchange_strong(none, s);
      }
      if (finished.fetch_add(1) + 1 == ranges) finished.notify_all();
    }
  }
};

class ThreadPool {
 public:
  static ThreadPool& instance() {
    // Never destroyed: workers may still sleep in it when the program exits.
    static ThreadPool* pool = new ThreadPool();
    return *pool;
  }

  int32_t run(int64_t n, int threads, const std::function<int32_t(int64_t, int64_t)>& range) {
    std::lock_guard<std::mutex> one_loop_at_a_time(run_mutex_);
    ensure_workers(threads - 1);
    auto job = std::make_shared<Job>();
    job->n = n;
    job->ranges = threads;
    job->range = &range;
    resting_.store(false, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = job;
      ++generation_;
      wanted_ = threads - 1;
    }
    wake_.notify_all();
    in_parallel_region = true;
    job->work();
    in_parallel_region = false;
    // Only ranges a worker claimed can be unfinished here: spin for them, as a worker
    // spins for the next loop (a caller put to sleep would wait 50-70 us to wake).
    auto all_finished = [&] { return job->finished.load(std::memory_order_acquire) == job->ranges; };
    if (!spin_until(all_finished, wait_)) {
      for (int done = job->finished.load(); done < job->ranges; done = job->finished.load()) job->finished.wait(done);
    }
    return job->status.load();
  }

  void rest() { resting_.store(true); }

 private:
  std::mutex run_mutex_;  // one parallel loop at a time (calls from several host threads take turns)
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> job_;
  std::atomic<uint64_t> generation_{0};  // written under mutex_; read without it to spin
  std::atomic<bool> resting_{false};      // set by rest(): idle workers sleep without spinning
  int wanted_ = 0;  // workers the current job can use
  std::vector<std::thread> workers_;
  const std::chrono::microseconds wait_ = wait_before_sleeping();

  void ensure_workers(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { worker_loop(index); });
      workers_.back().detach();
    }
  }

  void worker_loop(int index) {
    in_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen || resting_.load(); }, wait_);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (index < wanted_) job = job_;
      }
      if (job) job->work();
    }
  }
};

}  // namespace

void pool_rest() { ThreadPool::instance().rest(); }

int32_t pool_parallel_for(int64_t n, int threads, const std::function<int32_t(int64_t begin, int64_t end)>& range) {
  if (n <= 0) return 0;
  threads = static_cast<int>(std::min<int64_t>(threads, n));
  if (threads <= 1 || in_parallel_region) return range(0, n);
  return ThreadPool::instance().run(n, threads, range);
}

}  // namespace temper
