#include "measure/buffer_placement.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "compiler/ir/error.h"

namespace temper::measure {
namespace {

constexpr int64_t kPage = 4096;

int64_t whole_pages(int64_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage;
}

}  // namespace

void BufferPlacement::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

BufferPlacement::BufferPlacement(const std::vector<NDArray*>& args) {
  for (const NDArray* a : args) {
    int64_t size = whole_pages(a->nbytes()) + kSlackPages * kPage;
    void* slot = std::aligned_alloc(kPage, static_cast<size_t>(size));
    if (!slot) throw std::bad_alloc();
    // Touched now, so that the pages are the same ones for every candidate.
    std::memset(slot, 0, static_cast<size_t>(size));
    slots_.emplace_back(slot);
    nbytes_.push_back(a->nbytes());
  }
}

std::vector<TemperTensor> BufferPlacement::place(const std::vector<NDArray*>& args, std::mt19937_64& rng) {
  TEMPER_CHECK(args.size() == slots_.size(), "placing ", args.size(), " arguments in ", slots_.size(), " slots");
  std::uniform_int_distribution<int64_t> page(0, kSlackPages);
  std::vector<TemperTensor> tensors;
  for (size_t i = 0; i < args.size(); ++i) {
    TEMPER_CHECK(args[i]->nbytes() == nbytes_[i], "argument ", i, " changed size");
    char* data = static_cast<char*>(slots_[i].get()) + page(rng) * kPage;
    std::memcpy(data, args[i]->data(), static_cast<size_t>(nbytes_[i]));
    TemperTensor t = args[i]->tensor();
    t.data = data;
    tensors.push_back(t);
  }
  return tensors;
}

}  // namespace temper::measure
