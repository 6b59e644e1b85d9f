// Evicting a buffer from every cache level, line by line (clflush), so that the next read
// of it comes from memory: the state a model's weights are in when a layer runs, since
// the weights of the whole model pass through the caches once per inference and do not
// fit in them. The worker does this to a candidate's weight inputs before each timed call
// (RunnerOptions::cold_weights). A no-op where the CPU has no such instruction.
#pragma once

#include <cstddef>

namespace temper::measure {

void evict_from_caches(const void* data, size_t bytes);

}  // namespace temper::measure
