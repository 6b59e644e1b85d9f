// The table of ops that workloads name: for each, its keys (kind, default) and the
// function that instantiates it. Internal to compiler/ops: op_table.cpp defines the table
// and the instantiate functions; workload.cpp looks ops up in it to parse, canonicalise
// and instantiate workloads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ops/workload.h"

namespace temper::ops {

enum class ParamKind {
  Positive,     // an integer > 0
  NonNegative,  // an integer >= 0
  Bool,         // 0 or 1 (true/false accepted)
  Float,        // a finite number
  Choice,       // one of ParamSpec::choices
  Shape,        // a list of integers > 0 ("1x64x56x56")
  Indices,      // a list of integers >= 0 ("0x2x1")
  Pair,         // 1 or 2 integers > 0: both dimensions, or height x width
  Pads,         // 1, 2 or 4 integers >= 0: all sides, HxW, or top x left x bottom x right
};

struct ParamSpec {
  std::string key;
  ParamKind kind;
  std::optional<std::string> default_value;  // nullopt: required
  std::vector<std::string> choices;          // Choice only
};

struct OpSpec {
  std::string op;
  std::string doc;
  std::vector<ParamSpec> params;
  OpInstance (*instantiate)(const Workload&);
};

const std::vector<OpSpec>& op_specs();
// The spec of op, or UserError listing the known ops.
const OpSpec& find_op_spec(const std::string& op);

}  // namespace temper::ops
