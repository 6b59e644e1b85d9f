// BufferPlacement: the copies a CPU candidate is timed on hold the arguments' data, keep
// their alignment, stay inside their slots, and move between timings.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "compiler/ir/error.h"
#include "measure/buffer_placement.h"

namespace temper::measure {
namespace {

TEST(BufferPlacement, CopiesTheArgumentsToPageOffsetsDrawnAfreshEachTime) {
  NDArray a = NDArray::random({1000, 3}, DataType::float32(), 1);  // not a whole number of pages
  NDArray b = NDArray::random({5}, DataType::float32(), 2);
  std::vector<NDArray*> args = {&a, &b};
  BufferPlacement placement(args);
  std::mt19937_64 rng(7);
  std::set<uintptr_t> where_a;
  uintptr_t lowest = UINTPTR_MAX, highest = 0;
  for (int draw = 0; draw < 32; ++draw) {
    std::vector<TemperTensor> placed = placement.place(args, rng);
    ASSERT_EQ(placed.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_NE(placed[i].data, args[i]->data());
      EXPECT_EQ(std::memcmp(placed[i].data, args[i]->data(), args[i]->nbytes()), 0) << "argument " << i;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(placed[i].data) % 4096, 0u) << "page-aligned";
      EXPECT_EQ(placed[i].ndim, args[i]->tensor().ndim);
      EXPECT_EQ(placed[i].shape, args[i]->tensor().shape);
    }
    uintptr_t p = reinterpret_cast<uintptr_t>(placed[0].data);
    where_a.insert(p);
    lowest = std::min(lowest, p);
    highest = std::max(highest, p);
  }
  EXPECT_GE(where_a.size(), 8u) << "32 draws among 65 offsets came out nearly the same";
  EXPECT_LE(highest - lowest, static_cast<uintptr_t>(BufferPlacement::kSlackPages) * 4096);
  std::vector<NDArray*> other = {&a};
  EXPECT_THROW(placement.place(other, rng), InternalError);
}

}  // namespace
}  // namespace temper::measure
