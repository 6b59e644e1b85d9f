#include "measure/cache_eviction.h"

#include <cstdint>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace temper::measure {

void evict_from_caches(const void* data, size_t bytes) {
#if defined(__x86_64__)
  constexpr uintptr_t kLine = 64;
  uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(kLine - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  for (uintptr_t p = begin; p < end; p += kLine) _mm_clflush(reinterpret_cast<const void*>(p));
  _mm_mfence();  // the flushes are done before the timed call starts
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace temper::measure
