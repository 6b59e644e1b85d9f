// The heap blocks behind temper_alloc: a block a thread frees is kept for its next
// allocation of the same size. Kernels allocate their temporaries (a packed copy, a local
// tile too big for the stack) on every call, often once per iteration of a parallel loop;
// straight from malloc, a block of 128 KiB or more can come fresh from the OS each time
// (mmap, then a page fault per page), depending on the process's malloc history. A
// 1024^3 matmul whose 128 KiB accumulator tile is allocated per parallel iteration ran
// at 137 GFLOP/s in one process and 163 in another for that reason alone. TVM keeps a
// workspace pool for the same purpose.
//
// A block of 2 MiB or more (a model's weights and activations come from here too) is
// aligned to 2 MiB and advised to be backed by transparent huge pages (MADV_HUGEPAGE;
// Debian's default THP mode is madvise): a kernel streaming a weight of several MiB then
// misses in the TLB once per 2 MiB rather than once per 4 KiB. ResNet-18 ran about 2%
// faster (minimum latency over 100 runs, lower in 6 of 6 interleaved pairs of `temper run`).
//
// Bounded per thread: at most kMaxBlocks blocks and kMaxBytes bytes are kept, the oldest
// released first; a block over kMaxBlockBytes is never kept. A block may be freed on
// another thread than the one that allocated it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace temper::runtime {

constexpr size_t kBlockAlignment = 64;
constexpr size_t kMaxBlocks = 8;
constexpr size_t kMaxBlockBytes = size_t{16} << 20;
constexpr size_t kMaxBytes = size_t{64} << 20;

// kBlockAlignment-aligned memory of at least `bytes` (>= 0) bytes; nullptr when out of
// memory.
void* cached_alloc(int64_t bytes);
// Returns a block of cached_alloc (nullptr: nothing) to this thread's cache.
void cached_free(void* ptr);
// The bytes this thread's cache holds (for tests).
size_t cached_bytes();

}  // namespace temper::runtime
