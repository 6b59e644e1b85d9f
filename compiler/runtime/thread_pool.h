// The thread pool behind temper_parallel_for. Iterations are split into one contiguous
// range per thread (OpenMP's static schedule: each thread walks its own slice of the
// data), but a range belongs to whichever thread claims it first: the calling thread
// claims ranges until none is left, and waits only for ranges a worker has started. On a
// loaded machine a worker the scheduler has not run yet therefore costs nothing -- the
// caller does its share -- where a fork-join barrier would wait a time slice or more for
// it (4 to 15 ms per parallel loop measured with libgomp at load 6 on 2 cores).
//
// Workers spin for the next loop, and the caller for a range a worker still runs, for
// 10 ms by default (TEMPER_SPIN_US), then sleep. A parallel loop started from inside
// another one (from a worker, or from the caller while it runs a range) runs serially on
// that thread.
#pragma once

#include <cstdint>
#include <functional>

namespace temper {

// Runs range(begin, end) over [0, n) split into `threads` ranges on the pool; returns
// the first non-zero status a range returned (the other ranges still run or are skipped,
// never half-run). threads <= 1 or a nested call: serially on this thread.
int32_t pool_parallel_for(int64_t n, int threads, const std::function<int32_t(int64_t begin, int64_t end)>& range);

// Lets the idle workers sleep now rather than spin until the next loop: for a process done
// with parallel work for a while (the measure worker between candidates, whose spinning
// would take a core from the builds of the next batch: a 160-trial tuning job ran 8% longer).
void pool_rest();

}  // namespace temper
