// Evicting a buffer from every cache level, line by line (clflush), so that the next access
// to it goes to memory: the state a model's weights are in when a layer runs, since the
// weights of the whole model pass through the caches once per inference and do not fit in
// them, and much the state of the storage a layer writes its output into. The worker does
// this to a candidate's weight inputs and outputs before each timed call
// (RunnerOptions::cold_caches). A no-op where the CPU has no such instruction.
#pragma once

#include <cstddef>

namespace temper::measure {

void evict_from_caches(const void* data, size_t bytes);

}  // namespace temper::measure
