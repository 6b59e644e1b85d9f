// What the sketch rules (sketch_rule.h) and the random annotation ask about a stage -- a
// block of the program being scheduled -- read off the schedule's current program. These
// are Ansor's access-analysis predicates, on TensorIR blocks:
//
//   strictly inlinable   elementwise-like (no reduction), no select / if, no expensive
//                        math (exp, tanh, ...), not writing a parameter, read by someone:
//                        inlining it costs nothing and saves a buffer.
//   data reuse           a reduction where some read misses a spatial axis of extent > 1
//                        (matmul's A misses j): the stage profits from multi-level tiling.
//   elementwise consumer a consumer that is no reduction and reads the stage's output at
//                        exactly its own spatial axes: it can be fused into the stage's tiles.
//   packable read        a read of a stage with data reuse that misses a spatial axis and
//                        whose last dimension follows the innermost spatial axis (matmul's
//                        B[k, j]): the rows a register tile reads lie a whole row apart; a
//                        copy made under an outer tile's loop puts them side by side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

struct StageFacts {
  std::string name;
  bool is_reduction = false;
  bool writes_param = false;
  bool strictly_inlinable = false;
  bool has_data_reuse = false;
  std::optional<int> packable_read;  // index into the block's reads
  int num_reads = 0;                 // a reduction's first read is its accumulator
  std::vector<std::string> consumers;  // blocks that read this block's output
  // Products of the extents of the spatial and of the reduction axes.
  int64_t spatial_size = 1;
  int64_t reduce_size = 1;
  // Per loop around the block (outermost first): does it bind a reduction axis?
  std::vector<bool> loop_is_reduce;
};

// The facts of block `name` in s's current program; InternalError when there is none.
StageFacts stage_facts(const Schedule& s, const std::string& name);
// The names of the blocks of s's current program, in program order.
std::vector<std::string> stage_names(const Schedule& s);
// True when `consumer` is no reduction and reads `producer`'s output at exactly its own
// spatial axes, in order (relu after matmul; not a transpose, not a broadcast).
bool is_elementwise_consumer(const Schedule& s, const std::string& producer, const std::string& consumer);

}  // namespace temper::schedule_space
