// What the measurer takes and gives back. A candidate is a scheduled PrimFunc of a
// workload; a result is its times per run, or why there are none. The measurer knows no
// tuner and no log: search/ turns results into tuning records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ops/workload.h"
#include "compiler/target/target.h"

namespace temper::measure {

// Why a candidate has no time. The names (error_name) are those of the tuning log's
// ErrorKind, so the two convert by name.
enum class MeasureError {
  None,
  CompileError,
  CompileTimeout,
  RuntimeError,
  RunTimeout,
  WrongResult,
  InstantiationError
};
const char* error_name(MeasureError error);

struct MeasureInput {
  ops::Workload workload;  // the worker re-instantiates it for data and the reference
  Target target;
  PrimFunc func;  // scheduled; takes the op's parameters in order (input packed_input packed, with pack)
  // A candidate that reads a constant input in a layout of its own (a conv2d's weight in
  // NCHWc blocks) runs in a model on that input packed once at build time. It is measured
  // so: the worker runs pack (parameters: the op's input packed_input, the packed array)
  // once, untimed, and times func alone on the packed array. CPU targets only.
  std::optional<PrimFunc> pack;
  int packed_input = -1;
  // How another process rebuilds func (and pack) from the workload and target: a JSON text
  // that search/candidate_recipe.h writes and reads; the builder's compile workers take
  // it. Empty for a PrimFunc made by hand, which compiles in a forked child instead.
  std::string recipe;
};

// A compiled candidate in the builder's work directory: a shared library for a CPU
// target, a saved DeviceProgram (codegen/gpu/device_program.h, a .gpu.json file) for a GPU one.
struct BuildArtifact {
  std::string library_path;
  std::string function_name;  // the PrimFunc's name (runtime/module.h adds the symbol prefix)
  std::string pack_function;  // MeasureInput::pack's name, in the same library; empty without one
  double compile_seconds = 0;
  MeasureError error = MeasureError::None;
  std::string message;
};

struct MeasureResult {
  std::vector<double> costs;  // seconds per call, one per repeat
  double mean = 0;            // mean of costs; 0 when error != None
  MeasureError error = MeasureError::None;
  std::string message;         // the compiler's or worker's words, or what differed from the reference
  double compile_seconds = 0;  // building this candidate
  double run_seconds = 0;      // wall time the runner spent on it, checking and timing included
};

}  // namespace temper::measure
