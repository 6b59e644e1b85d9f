// Between two contenders' rounds: a runtime whose idle workers spin on after a call
// (onnxruntime's for about 50 ms, one core's worth; OpenMP's and OpenBLAS's a while too)
// would take a core from whoever runs next, so the next round waits until they are quiet.
#pragma once

#include <vector>

namespace temper::sweep {

// Waits until the threads of these processes (for this process: all but the calling
// thread) have run less than a tenth of a core over a window of window_ms, at most
// max_wait_ms; returns the milliseconds waited.
double wait_until_quiet(const std::vector<int>& pids, double window_ms = 5, double max_wait_ms = 1000);

}  // namespace temper::sweep
