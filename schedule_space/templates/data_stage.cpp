#include "schedule_space/templates/data_stage.h"

#include <algorithm>

#include "compiler/ir/error.h"

namespace temper::schedule_space {

void schedule_data_stage(Schedule& s, const std::string& block, int lanes) {
  std::vector<LoopRV> loops = s.get_loops(s.get_block(block));
  TEMPER_CHECK(!loops.empty(), "schedule_data_stage: stage ", block, " has no loop");
  LoopRV inner = loops.back();
  const int64_t* extent = as_const_int(s.loop(inner)->extent);
  TEMPER_CHECK(extent != nullptr, "schedule_data_stage: stage ", block, " has a loop of non-constant extent");
  if (*extent % lanes == 0 && *extent > 1) {
    std::vector<LoopRV> parts = s.split(inner, {std::nullopt, lanes});
    s.vectorize(parts[1]);
  }
  // Two outer loops give the threads enough iterations to share even where the first is short.
  std::vector<LoopRV> outer(loops.begin(), loops.begin() + std::min<size_t>(2, loops.size() - 1));
  if (outer.empty()) return;
  s.parallel(outer.size() > 1 ? s.fuse(outer) : outer[0]);
}

void place_padding(Schedule& s, const std::string& block, const std::string& where, LoopRV tiles, int lanes) {
  if (where == "inline") {
    s.compute_inline(s.get_block(block));
  } else if (where == "tile") {
    s.compute_at(s.get_block(block), tiles);
  } else {
    schedule_data_stage(s, block, lanes);
  }
}

int64_t loop_extent(Schedule& s, LoopRV loop) {
  const int64_t* c = as_const_int(s.loop(loop)->extent);
  TEMPER_CHECK(c != nullptr, "template schedule: a loop of non-constant extent");
  return *c;
}

bool has_padding(const ops::Workload& w) {
  for (int64_t p : w.get_ints("pad")) {
    if (p != 0) return true;
  }
  return false;
}

}  // namespace temper::schedule_space
