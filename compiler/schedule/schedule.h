// Schedules: TensorIR-style transformations of a PrimFunc, one primitive at a time.
//
//   Schedule s(te::create_prim_func({A, B, C}, "matmul"));
//   BlockRV c = s.get_block("C");
//   std::vector<LoopRV> l = s.get_loops(c);               // i, j, k
//   std::vector<LoopRV> i = s.split(l[0], {std::nullopt, 6});
//   s.reorder({i[0], l[1], l[2], i[1]});
//   s.vectorize(...);
//   nlohmann::json record = s.trace().to_json();          // replayable: Trace::replay
//
// What a primitive expects: the form create_prim_func produces, and what earlier
// primitives make of it. Every block sits in a nest of loops and has a unique name;
// its BlockRealize binds its iteration variables to expressions of those loops; a block
// writes its buffer at the point given by its spatial variables; buffers that are not
// parameters are allocated by Allocate statements at the top of the body.
//
// What a primitive guarantees: it checks that the step is legal and throws
// ScheduleError (saying which loop or block, why, and what to do instead) without
// changing anything when it is not; otherwise it leaves a valid program and appends one
// instruction to the trace. Index expressions it builds are simplified (i_o * 8 + i_i).
//
// Random variables name what a primitive works on: a LoopRV is a loop, found in the
// current program by its loop variable; a BlockRV a block, found by its name; an ExprRV
// a sampled integer. A loop that a primitive replaced (a split loop, a fused loop, the
// loops of a block moved by compute_at) is gone: using its LoopRV is a ScheduleError.
//
// New buffers (cache_read, cache_write, rfactor) have the full shape of the buffer they
// cache or the full reduction domain, and are introduced as Allocate statements at the
// top of the function body, innermost after the ones already there. Lowering moves each
// allocation to where it is used and shrinks it to the region accessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/schedule/trace.h"

namespace temper {

// An illegal schedule step. A search catches exactly this to reject a candidate.
class ScheduleError : public UserError {
 public:
  using UserError::UserError;
};

struct LoopRV {
  int id = -1;
};
struct BlockRV {
  int id = -1;
};
struct ExprRV {
  int id = -1;
};

namespace schedule_detail {
struct LoopSite;
struct BlockSite;
}  // namespace schedule_detail

// One factor of a split: a constant, a sampled value, or the factor to infer from the
// loop extent and the others (std::nullopt, or -1 as in TVM).
class SplitFactor {
 public:
  SplitFactor(int64_t value);   // NOLINT(google-explicit-constructor)
  SplitFactor(int value);       // NOLINT(google-explicit-constructor)
  SplitFactor(ExprRV value);    // NOLINT(google-explicit-constructor)
  SplitFactor(std::nullopt_t);  // NOLINT(google-explicit-constructor)
  bool is_inferred() const { return std::holds_alternative<std::monostate>(value_); }
  const std::variant<std::monostate, int64_t, ExprRV>& value() const { return value_; }

 private:
  std::variant<std::monostate, int64_t, ExprRV> value_;
};

class Schedule {
 public:
  // seed drives the sampling steps that are not given a decision.
  explicit Schedule(PrimFunc f, uint64_t seed = 0);

  const PrimFunc& func() const { return func_; }
  const Trace& trace() const { return trace_; }

  // ---------------------------------------------------------------- lookups
  BlockRV get_block(const std::string& name);
  // The loops around a block, outermost first.
  std::vector<LoopRV> get_loops(BlockRV block);
  int64_t get(ExprRV value) const;
  Var loop_var(LoopRV loop) const;
  const ForNode* loop(LoopRV loop) const;
  std::string block_name(BlockRV block) const;

  // ---------------------------------------------------------------- sampling
  // n factors whose product is the loop's (constant) extent, the innermost at most
  // max_innermost_factor. A decision forces the factors (checked).
  std::vector<ExprRV> sample_perfect_tile(LoopRV loop, int n, int max_innermost_factor,
                                          std::optional<std::vector<int64_t>> decision = {});
  // One of candidates, drawn with the given (unnormalised) probabilities; a decision
  // forces the index.
  ExprRV sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                            std::optional<int> decision = {});

  // ---------------------------------------------------------------- loops
  // Splits a loop of constant extent into len(factors) nested loops, outermost first.
  // At most one factor is inferred (ceil(extent / product of the others)). Factors that
  // do not divide the extent leave a tail: every block under the loop gets the predicate
  // `outer * f + inner < extent`. With allow_tail = false a tail is a ScheduleError.
  std::vector<LoopRV> split(LoopRV loop, const std::vector<SplitFactor>& factors, bool allow_tail = true);
  // Splits loops[i] by inner_factors[i] (the inner extent) and orders the result
  // outer loops first: tile({i, j}, {8, 16}) -> {i_o, j_o, i_i, j_i}.
  std::vector<LoopRV> tile(const std::vector<LoopRV>& loops, const std::vector<SplitFactor>& inner_factors);
  // Fuses a perfect nest of serial loops (given outermost first, starting at 0) into one.
  LoopRV fuse(const std::vector<LoopRV>& loops);
  // Puts the given loops, which must lie in one perfect nest, into the given order; loops
  // of the nest not named keep their places.
  void reorder(const std::vector<LoopRV>& order);
  // Loop kinds. parallel and vectorize refuse loops that bind a reduction variable.
  void parallel(LoopRV loop);
  void vectorize(LoopRV loop);
  void unroll(LoopRV loop);
  // Binds a loop to a GPU thread axis: blockIdx.{x,y,z}, threadIdx.{x,y,z}, vthread.
  void bind(LoopRV loop, const std::string& thread_tag);
  void annotate(LoopRV loop, const std::string& key, const AnnotationValue& value);
  void annotate(LoopRV loop, const std::string& key, ExprRV value);
  void annotate(BlockRV block, const std::string& key, const AnnotationValue& value);
  void annotate(BlockRV block, const std::string& key, ExprRV value);

  // ---------------------------------------------------------------- blocks
  // Moves a producer block under a loop that encloses all of its consumers, at the
  // start of that loop's body. The new loops cover exactly the region of the produced
  // buffer that the consumers read in one iteration of `loop` (extent-1 loops are left
  // out); points outside the buffer are cut off by a predicate.
  void compute_at(BlockRV block, LoopRV loop);
  // Moves a consumer block under a loop of its producer, at the end of that loop's body,
  // over the region the producer writes in one iteration of `loop`.
  void reverse_compute_at(BlockRV block, LoopRV loop);
  // Substitutes an elementwise producer into its consumers and removes it (and its
  // buffer). Not for reductions nor for blocks that write a function parameter.
  void compute_inline(BlockRV block);
  // A new block copies the buffer of block's reads[read_buffer_index] into a new buffer
  // in `scope`; block then reads the copy. The copy is placed before the loop nest of
  // `block`. Returns the copy block (named <buffer>_<scope>).
  // layout, when given, orders the copy's dimensions: dimension d of the copy is
  // dimension layout[d] of the buffer (a permutation), so that the axis a register
  // tile runs along can be made the contiguous one (a layout rewrite of the read).
  BlockRV cache_read(BlockRV block, int read_buffer_index, const std::string& scope,
                     const std::vector<int>& layout = {});
  // block writes a new buffer in `scope` instead of writes[write_buffer_index]; a new
  // block placed after block's loop nest copies it to the original buffer. Returns the
  // copy block (named <buffer>_<scope>). layout as for cache_read.
  BlockRV cache_write(BlockRV block, int write_buffer_index, const std::string& scope,
                      const std::vector<int>& layout = {});
  // TVM's rfactor: the reduction over `loop` (a loop that binds only reduction
  // variables) becomes a spatial axis of a new buffer <buffer>_rf, inserted at
  // factor_axis of the output's shape; a new block <block>_rf computes the partial
  // results in the original loops, and the original block, in new loops placed after
  // that nest, reduces them. Returns the <block>_rf block.
  BlockRV rfactor(LoopRV loop, int factor_axis);
  // Takes the init statement out of a reduction block into a new block <block>_init,
  // placed just before `loop` (an ancestor of block outside all of its reduction loops)
  // in copies of the loops between `loop` and block that bind spatial variables.
  // Returns the init block.
  BlockRV decompose_reduction(BlockRV block, LoopRV loop);
  // Replaces the loop nest rooted at `loop` by a call of a micro-kernel (see
  // tensor_intrin.h). The nest must compute exactly what the intrinsic describes; a
  // mismatch is a ScheduleError that says what differs.
  void tensorize(LoopRV loop, const std::string& intrin_name);

 private:
  PrimFunc func_;
  Trace trace_;
  // Random variables by id: a loop variable, a block name, or a sampled value.
  std::vector<std::variant<Var, std::string, int64_t>> rvs_;
  uint64_t rng_state_;

  uint64_t next_random();
  LoopRV new_loop_rv(const Var& v);
  BlockRV new_block_rv(const std::string& name);
  ExprRV new_expr_rv(int64_t value);
  schedule_detail::LoopSite find(LoopRV loop, const char* primitive) const;
  schedule_detail::BlockSite find(BlockRV block, const char* primitive) const;
  int64_t factor_value(const SplitFactor& f) const;
  void record(InstKind kind, std::vector<InstInput> inputs, nlohmann::json attrs, std::vector<RVRef> outputs,
              std::optional<std::vector<int64_t>> decision = {});
  void set_loop_kind(LoopRV loop, ForKind kind, const std::string& thread_tag, InstKind inst, const char* primitive);
  void annotate_impl(InstInput target, const std::string& key, const AnnotationValue& value,
                     std::optional<ExprRV> from);
};

// The prime factors of n >= 1, smallest first, with repeats: what sample_perfect_tile
// spreads over a tile's levels, and what a mutation moves from one level to another.
std::vector<int64_t> prime_factors(int64_t n);

// RV references for trace instructions.
RVRef ref(LoopRV rv);
RVRef ref(BlockRV rv);
RVRef ref(ExprRV rv);

}  // namespace temper
