#include "compiler/runtime/block_cache.h"

#include <cstdlib>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace temper::runtime {
namespace {

// Each block starts with a header holding its size; the caller's memory follows it.
constexpr size_t kHeader = kBlockAlignment;

// Blocks of this size or more are aligned to it and asked to be backed by huge pages.
constexpr size_t kHugePage = size_t{2} << 20;

// The size class of a request: a multiple of 64 bytes below 4 KiB, of 4 KiB above, so
// that blocks of nearly the same size are reused too.
size_t size_class(int64_t bytes) {
  size_t b = bytes < 1 ? 1 : static_cast<size_t>(bytes);
  size_t grain = b < 4096 ? kBlockAlignment : 4096;
  return (b + grain - 1) / grain * grain;
}

// Trivially destructible, so still readable after the cache of an exiting thread is gone
// (a static object freeing an array at exit).
thread_local bool cache_gone = false;

struct Cache {
  std::vector<std::pair<size_t, void*>> blocks;  // (size class, block), oldest first
  size_t bytes = 0;

  void release_oldest() {
    bytes -= blocks.front().first;
    std::free(blocks.front().second);
    blocks.erase(blocks.begin());
  }
  ~Cache() {
    while (!blocks.empty()) release_oldest();
    cache_gone = true;
  }
};

thread_local Cache cache;

Cache* this_thread_cache() {
  return cache_gone ? nullptr : &cache;
}

}  // namespace

void* cached_alloc(int64_t bytes) {
  size_t size = size_class(bytes);
  if (Cache* c = this_thread_cache()) {
    for (size_t k = c->blocks.size(); k-- > 0;) {
      if (c->blocks[k].first != size) continue;
      void* block = c->blocks[k].second;
      c->bytes -= size;
      c->blocks.erase(c->blocks.begin() + static_cast<std::ptrdiff_t>(k));
      return static_cast<char*>(block) + kHeader;
    }
  }
  if (size > SIZE_MAX - kHeader) return nullptr;
  void* block = nullptr;
  if (size + kHeader >= kHugePage) {
    size_t whole = (size + kHeader + kHugePage - 1) / kHugePage * kHugePage;
    block = std::aligned_alloc(kHugePage, whole);
#ifdef __linux__
    if (block) madvise(block, whole, MADV_HUGEPAGE);
#endif
  } else {
    block = std::aligned_alloc(kBlockAlignment, size + kHeader);
  }
  if (!block) return nullptr;
  *static_cast<size_t*>(block) = size;
  return static_cast<char*>(block) + kHeader;
}

void cached_free(void* ptr) {
  if (!ptr) return;
  void* block = static_cast<char*>(ptr) - kHeader;
  size_t size = *static_cast<size_t*>(block);
  Cache* c = this_thread_cache();
  if (!c || size > kMaxBlockBytes) {
    std::free(block);
    return;
  }
  c->blocks.emplace_back(size, block);
  c->bytes += size;
  while (c->blocks.size() > kMaxBlocks || c->bytes > kMaxBytes) c->release_oldest();
}

size_t cached_bytes() {
  Cache* c = this_thread_cache();
  return c ? c->bytes : 0;
}

}  // namespace temper::runtime
