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
//   vector axes          the spatial axes a stage with data reuse can vectorize its register
//                        tile along: the innermost (Ansor's choice), and for a window stage
//                        (conv: the innermost axis indexes a read together with a reduction
//                        axis, ow + rx) every other axis that alone indexes a read (conv's
//                        output channels index the weight): vectorized along it, each step
//                        is one weight vector times a broadcast input value.
//   packed read          per vector axis, a read that misses a spatial axis and has a
//                        dimension that follows the vector axis (matmul's B[k, j]): the rows
//                        a register tile reads lie a whole row apart; a copy made under an
//                        outer tile's loop puts them side by side, and where that dimension
//                        is not the last (conv's weight[k, c, r, s] along k, attention's
//                        K[b, j, k] along j), the copy moves it last.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

// An axis to vectorize a register tile along, and the read to copy for it.
struct VectorAxis {
  int loop = 0;                    // index of the block's loop (and iteration variable)
  std::optional<int> packed_read;  // index into the block's reads
  std::vector<int> packed_layout;  // the copy's dimensions, as cache_read takes them (empty: unchanged)
  // The block's spatial loops (of extent > 1) that index the packed read: the copy is
  // made per tile of these, and reused across the others (the panel, AddCacheReadForPacking).
  std::vector<int> packed_read_loops;
  // A write cache's dimensions with the one the axis indexes last (empty: unchanged).
  std::vector<int> output_layout;
};

struct StageFacts {
  std::string name;
  bool is_reduction = false;
  bool writes_param = false;
  bool strictly_inlinable = false;
  bool has_data_reuse = false;
  // For a stage with data reuse: the innermost spatial axis first, then the alternatives.
  std::vector<VectorAxis> vector_axes;
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
// spatial axes, each once, in any order (relu after matmul, the copy out of a write
// cache laid out in another order; not a broadcast).
bool is_elementwise_consumer(const Schedule& s, const std::string& producer, const std::string& consumer);

}  // namespace temper::schedule_space
