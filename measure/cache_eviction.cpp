#include "measure/cache_eviction.h"

#include <cstdint>

#include "compiler/runtime/c_runtime_api.h"

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

namespace {

struct RowsSplit {
  unsigned char* data;
  int64_t planes, rows;  // planes: C/b; rows: H
  size_t row_bytes, plane_bytes;
};

// Row i of every plane of image i / rows: one byte per cache line read and written back.
int32_t write_row(int64_t i, void* closure) {
  const RowsSplit& r = *static_cast<const RowsSplit*>(closure);
  unsigned char* image = r.data + static_cast<size_t>(i / r.rows) * r.plane_bytes * static_cast<size_t>(r.planes);
  for (int64_t c = 0; c < r.planes; ++c) {
    volatile unsigned char* row =
        image + static_cast<size_t>(c) * r.plane_bytes + static_cast<size_t>(i % r.rows) * r.row_bytes;
    for (size_t b = 0; b < r.row_bytes; b += 64) row[b] = row[b];
  }
  return 0;
}

}  // namespace

void write_rows_split(void* data, const std::vector<int64_t>& shape, size_t element_bytes) {
  if (shape.size() != 5) return;
  RowsSplit r{static_cast<unsigned char*>(data), shape[1], shape[2],
              static_cast<size_t>(shape[3] * shape[4]) * element_bytes, 0};
  r.plane_bytes = r.row_bytes * static_cast<size_t>(r.rows);
  if (r.row_bytes == 0 || r.planes == 0) return;
  temper_parallel_for(shape[0] * shape[2], write_row, &r);
}

}  // namespace temper::measure
