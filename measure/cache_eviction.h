// Evicting a buffer from every cache level, line by line (clflush), so that the next access
// to it goes to memory: the state a model's weights are in when a layer runs, since the
// weights of the whole model pass through the caches once per inference and do not fit in
// them, and much the state of the storage a layer writes its output into. The worker does
// this to a candidate's weight inputs and outputs before each timed call
// (RunnerOptions::cold_caches). A no-op where the CPU has no such instruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace temper::measure {

void evict_from_caches(const void* data, size_t bytes);

// Writes a blocked activation [N, C/b, H, W, b] back in place, a byte every 64 of each
// row (every cache line where a row is whole lines, as with 16 lanes of float), its
// rows split over the threads of parallel loops (temper_parallel_for's contiguous
// chunks) as the blocked kernels' rows-first split writes them: the state the previous
// kernel of a model leaves its output in, each thread's rows dirty in its own core's
// cache. A kernel that splits its work otherwise then reads part of its input from the
// other core, as it does in the model, at about a third of the rate (Zen 4: 43 vs 130
// GB/s). The values are unchanged.
void write_rows_split(void* data, const std::vector<int64_t>& shape, size_t element_bytes);

}  // namespace temper::measure
