#include "schedule_space/multi_level_tiling.h"

#include <algorithm>

#include "compiler/ops/block_info.h"

namespace temper::schedule_space {

TiledLoops multi_level_tile(Schedule& s, BlockRV block, const std::string& structure, int max_innermost_factor,
                            std::optional<int> innermost_loop, const std::vector<int>& outer_first) {
  const int spatial_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'S'));
  const int reduce_levels = static_cast<int>(std::count(structure.begin(), structure.end(), 'R'));
  TEMPER_CHECK(spatial_levels + reduce_levels == static_cast<int>(structure.size()) && spatial_levels > 0,
               "tile structure ", structure, " must be made of S and R");
  ops::BlockInfo info = ops::block_info(s, s.block_name(block));
  std::vector<LoopRV> loops = s.get_loops(block);
  TiledLoops tiles;
  tiles.levels.resize(structure.size());
  // The split loops of each kind, per loop: parts[k] is level k of that kind.
  std::vector<std::vector<LoopRV>> spatial, reduce;
  std::optional<size_t> innermost;  // index into spatial
  std::vector<bool> first;           // per entry of spatial: one of outer_first
  for (size_t l = 0; l < loops.size(); ++l) {
    const int64_t* extent = as_const_int(s.loop(loops[l])->extent);
    if (!extent) {
      throw ScheduleError(str("multi-level tiling: loop ", s.loop_var(loops[l]).name(), " of block ",
                              s.block_name(block), " has a non-constant extent"));
    }
    if (*extent == 1) {
      tiles.unit.push_back(loops[l]);
      continue;
    }
    int n = info.loop_is_reduce[l] ? reduce_levels : spatial_levels;
    if (n == 0) {
      throw ScheduleError(str("multi-level tiling: structure ", structure, " has no level for reduction loop ",
                              s.loop_var(loops[l]).name()));
    }
    std::vector<LoopRV> parts = {loops[l]};
    if (n > 1) {
      std::vector<ExprRV> factors = s.sample_perfect_tile(loops[l], n, max_innermost_factor);
      parts = s.split(loops[l], std::vector<SplitFactor>(factors.begin(), factors.end()), false);
    }
    if (!info.loop_is_reduce[l] && innermost_loop == static_cast<int>(l)) innermost = spatial.size();
    if (!info.loop_is_reduce[l]) {
      first.push_back(std::find(outer_first.begin(), outer_first.end(), static_cast<int>(l)) != outer_first.end());
    }
    (info.loop_is_reduce[l] ? reduce : spatial).push_back(parts);
  }
  if (innermost_loop && !innermost) {
    throw ScheduleError(str("multi-level tiling: loop ", *innermost_loop, " of block ", s.block_name(block),
                            " is no spatial loop of extent > 1 to vectorize along"));
  }
  const int last_spatial = structure.find_last_of('S');
  std::vector<LoopRV> order = tiles.unit;
  int next_spatial = 0, next_reduce = 0;
  for (size_t level = 0; level < structure.size(); ++level) {
    bool is_spatial = structure[level] == 'S';
    int k = is_spatial ? next_spatial++ : next_reduce++;
    for (const std::vector<LoopRV>& parts : is_spatial ? spatial : reduce) tiles.levels[level].push_back(parts[k]);
    if (level == 0 && is_spatial) {
      std::vector<LoopRV> ahead, behind;
      for (size_t p = 0; p < spatial.size(); ++p) (first[p] ? ahead : behind).push_back(spatial[p][0]);
      tiles.outer_first = ahead.size();
      ahead.insert(ahead.end(), behind.begin(), behind.end());
      tiles.levels[0] = ahead;
    }
    if (static_cast<int>(level) == last_spatial && innermost) {
      std::vector<LoopRV>& loops_here = tiles.levels[level];
      std::rotate(loops_here.begin() + static_cast<std::ptrdiff_t>(*innermost),
                  loops_here.begin() + static_cast<std::ptrdiff_t>(*innermost) + 1, loops_here.end());
    }
    order.insert(order.end(), tiles.levels[level].begin(), tiles.levels[level].end());
  }
  if (order.size() > 1) s.reorder(order);
  return tiles;
}

std::optional<LoopRV> last_loop_at_or_above(const TiledLoops& tiles, size_t level) {
  for (size_t l = level + 1; l-- > 0;) {
    if (!tiles.levels[l].empty()) return tiles.levels[l].back();
  }
  if (!tiles.unit.empty()) return tiles.unit.back();
  return std::nullopt;
}

}  // namespace temper::schedule_space
