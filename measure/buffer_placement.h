// Where a candidate's buffers lie while it is timed. The worker keeps one workload's data
// for all its candidates, so without this every candidate of a job would be timed on the
// same physical pages. A kernel that strides across pages (a matrix's columns, 4 KiB
// apart) then meets the cache-set conflicts of that one page layout: lucky or unlucky for
// the whole job, and a search keeps whichever schedules the layout happens to favour,
// which lose their edge in any other process. So each timing copies the arguments to a
// page offset drawn at random within a slot of a few hundred KiB more than they need:
// every measurement samples another layout, and re-measurements (tune.h, confirmation)
// are independent draws.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/ndarray.h"

namespace temper::measure {

class BufferPlacement {
 public:
  // Slots for these arguments, allocated once and kept for the workload's candidates.
  explicit BufferPlacement(const std::vector<NDArray*>& args);

  // The arguments' tensors with their contents copied to freshly drawn page offsets:
  // valid until the next place() or the placement's end.
  std::vector<TemperTensor> place(const std::vector<NDArray*>& args, std::mt19937_64& rng);

  // The most pages an argument may be moved by.
  static constexpr int64_t kSlackPages = 64;

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, FreeDeleter>> slots_;
  std::vector<int64_t> nbytes_;
};

}  // namespace temper::measure
