// A schedule as plain data: the list of primitives applied to a PrimFunc, with the
// decisions its sampling steps took. Replaying a trace on the same workload rebuilds the
// same program; changing a decision (with_decision) and replaying is how a search mutates
// a schedule. The tuning log stores traces as JSON.
//
// JSON format (version 1):
//
//   {"version": 1,
//    "instructions": [
//      {"kind": "GetBlock",  "inputs": [],          "attrs": ["C"],   "outputs": ["b0"]},
//      {"kind": "GetLoops",  "inputs": ["b0"],      "attrs": [],      "outputs": ["l1", "l2", "l3"]},
//      {"kind": "SamplePerfectTile", "inputs": ["l1"], "attrs": [2, 16], "outputs": ["e4", "e5"],
//       "decision": [8, 8]},
//      {"kind": "Split",     "inputs": ["l1", "e4", "e5"], "attrs": [true], "outputs": ["l6", "l7"]},
//      {"kind": "Split",     "inputs": ["l2", null, 4],    "attrs": [true], "outputs": ["l8", "l9"]},
//      ...]}
//
// A random variable is written as a string: "b<id>" a block, "l<id>" a loop, "e<id>" a
// sampled integer. Ids are unique within a trace and every input RV must be an output of
// an earlier instruction. Inputs may also be integers (literal split factors) and null
// (the split factor to infer). "decision" is present exactly on the sampling
// instructions. Per kind (inputs / attrs / outputs):
//
//   GetBlock           -           / [name]                 / [b]
//   GetLoops           [b]         / []                     / [l, ...] outermost first
//   SamplePerfectTile  [l]         / [n, max_innermost]     / [e x n], decision: the n factors
//   SampleCategorical  []          / [[values], [probs]]    / [e],     decision: [index]
//   Split              [l, f, ...] / [allow_tail]           / [l, ...] (f: int, e or null)
//   Fuse               [l, ...]    / []                     / [l]
//   Reorder            [l, ...]    / []                     / []
//   Parallel, Vectorize, Unroll [l] / []                    / []
//   Bind               [l]         / [thread_tag]           / []
//   Annotate           [l|b]       / [key, value]           / []  (value: int or string)
//                      [l|b, e]    / [key]                  / []  (value: the sampled e)
//   ComputeAt, ReverseComputeAt [b, l] / []                 / []
//   ComputeInline      [b]         / []                     / []
//   CacheRead, CacheWrite [b]      / [buffer_index, scope]  / [b]
//   RFactor            [l]         / [factor_axis]          / [b]
//   DecomposeReduction [b, l]      / []                     / [b]
//   Tensorize          [l]         / [intrin_name]          / []
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper {

class Schedule;

enum class InstKind : uint8_t {
  GetBlock,
  GetLoops,
  SamplePerfectTile,
  SampleCategorical,
  Split,
  Fuse,
  Reorder,
  Parallel,
  Vectorize,
  Unroll,
  Bind,
  Annotate,
  ComputeAt,
  ReverseComputeAt,
  ComputeInline,
  CacheRead,
  CacheWrite,
  RFactor,
  DecomposeReduction,
  Tensorize,
};

const char* inst_kind_name(InstKind k);

// A reference to a random variable of a schedule.
struct RVRef {
  enum class Kind : uint8_t { Block, Loop, Expr };
  Kind kind;
  int id;
  bool operator==(const RVRef&) const = default;
};

// An instruction input: a random variable, a literal integer, or nothing (an inferred
// split factor).
using InstInput = std::variant<std::monostate, int64_t, RVRef>;

struct Instruction {
  InstKind kind;
  std::vector<InstInput> inputs;
  nlohmann::json attrs = nlohmann::json::array();
  std::vector<RVRef> outputs;
  // The sampled values (SamplePerfectTile: the factors; SampleCategorical: the index).
  std::optional<std::vector<int64_t>> decision;
};

class Trace {
 public:
  const std::vector<Instruction>& instructions() const { return insts_; }
  void append(Instruction inst) { insts_.push_back(std::move(inst)); }

  nlohmann::json to_json() const;
  // Throws UserError naming the instruction index and the field when the JSON is not a
  // well-formed trace (unknown kind, missing field, an RV used before it is defined ...).
  static Trace from_json(const nlohmann::json& j);

  // Applies the instructions to f, forcing every sampling decision; throws
  // ScheduleError when a step is illegal on f (e.g. a trace from another workload).
  Schedule replay(const PrimFunc& f) const;
  // replay, with the decision of the k-th sampling instruction taken from decisions[k]
  // where k < decisions.size(): a value that does not fit the program (a tile that does
  // not divide the loop, an index out of range) and an empty optional are drawn anew,
  // from seed. The result's trace holds the decisions taken. This is how a search
  // instantiates a sketch and applies a mutated decision.
  Schedule replay_with(const PrimFunc& f, const std::vector<std::optional<std::vector<int64_t>>>& decisions,
                       uint64_t seed) const;

  // The same trace with instruction `index`'s decision replaced (UserError if that
  // instruction samples nothing). Replay checks that the decision is valid.
  Trace with_decision(size_t index, std::vector<int64_t> decision) const;

 private:
  std::vector<Instruction> insts_;
};

}  // namespace temper
