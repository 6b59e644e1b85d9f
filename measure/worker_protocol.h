// What the runner and its worker process (temper-measure-worker) say to each other: one
// JSON object per line, a request on the worker's stdin, then on the worker's stdout a
// ready line once the workload's test data is ready and the candidate is about to run,
// and the reply; strictly in turn.
//
//   request  {"workload": "matmul:M=64,...", "target": "llvm -mcpu=native",
//             "library": "/tmp/.../b0_c3.so", "function": "matmul",
//             "number": 1, "repeat": 3, "min_repeat_ms": 0, "cooldown_ms": 0,
//             "flush_cache": false, "cold_caches": true, "threads": 0,
//             "token": "9f0c...", "memory_limit_mb": 12000}
//            (+ "pack_function": "conv2d_weight_pack", "packed_input": 1, "packed_shape": [...]
//             for a candidate that reads an input packed once: MeasureInput::pack)
//   ready    {"ready": true, "token": "9f0c..."}
//   reply    {"costs": [1.2e-05, ...], "error": "None", "message": "", "token": "9f0c...",
//             "restart": false}
//
// The token is a random word the runner makes for each request and the worker echoes:
// the candidate runs inside the worker and could write into its reply channel, and a line
// without the request's token was written by the candidate, not the worker. "restart"
// asks the runner for a fresh worker (the candidate left its memory grown).
//
// The ready line separates the worker's own work (the reference outputs of a big op take
// seconds) from the candidate's, which alone the candidate's time-out covers. A request
// that fails before the candidate runs (a malformed request, a workload that cannot be
// instantiated, a GPU target whose device does not open) gets its reply without a
// ready line.
//
// For a GPU target (Target::is_gpu) "library" is a saved DeviceProgram, and the worker
// runs it on the target's device.
//
// "error" is a MeasureError's name (error_name); costs are seconds per call, one per
// group, and empty unless error is "None". A malformed line is a UserError.
#pragma once

#include <string>
#include <vector>

#include "measure/measure_types.h"

namespace temper::measure {

struct WorkerRequest {
  std::string workload;  // canonical workload string
  std::string target;    // canonical target string: what the candidate was compiled for and runs on
  std::string library;   // path of the shared library, or of the DeviceProgram for a GPU target
  std::string function;  // the PrimFunc's name
  // With a pack function (MeasureInput::pack): its name, the input it packs, and the packed
  // array's shape; function then takes that input packed.
  std::string pack_function;
  int packed_input = -1;
  std::vector<int64_t> packed_shape;
  int number = 1;
  int repeat = 3;
  double min_repeat_ms = 0;
  double cooldown_ms = 0;
  bool flush_cache = false;
  bool cold_caches = false;  // RunnerOptions::cold_caches
  int threads = 0;           // 0: one per core
  std::string token;         // echoed in the ready line and the reply
  // How far a CPU candidate may grow the worker's address space (RLIMIT_AS); 0: no limit.
  int64_t memory_limit_mb = 0;
  // How much CPU time a candidate's calls may take (RLIMIT_CPU); 0: no limit.
  double cpu_time_limit_s = 0;
};

struct WorkerReply {
  std::vector<double> costs;
  MeasureError error = MeasureError::None;
  std::string message;
  std::string token;     // the request's
  bool restart = false;  // the worker should be replaced before the next candidate
};

// One line each, without the newline.
std::string encode_request(const WorkerRequest& request);
WorkerRequest decode_request(const std::string& line);
std::string encode_ready(const std::string& token);
// True for the ready line of the request with this token.
bool is_ready(const std::string& line, const std::string& token);
std::string encode_reply(const WorkerReply& reply);
WorkerReply decode_reply(const std::string& line);

// What the builder and a compile worker (temper-compile-worker, compile_pool.h) say to
// each other: a request per line on the worker's stdin, a reply per line on its stdout,
// strictly in turn.
//
//   request  {"id": 7, "workload": "matmul:M=64,...", "target": "llvm -mcpu=native",
//             "recipe": "{\"config\": ..., \"trace\": ..., \"prepacked\": false}",
//             "func_hash": 1234..., "pack_hash": 0, "path": "/tmp/.../b0_c3.so", "timeout_s": 30}
//   reply    {"id": 7, "rebuilt": true, "error": "None", "message": "", "compile_seconds": 0.04}
//
// The worker rebuilds the candidate from its workload and recipe (MeasureInput::recipe)
// and compiles it into path only if the rebuilt PrimFuncs hash as the builder's do
// (structural_hash; pack_hash 0: no pack function); "rebuilt": false says they did not
// (nothing was compiled), and the builder compiles its own PrimFunc another way.
struct CompileRequest {
  uint64_t id = 0;  // echoed in the reply
  std::string workload;
  std::string target;
  std::string recipe;
  uint64_t func_hash = 0;
  uint64_t pack_hash = 0;
  std::string path;
  double timeout_s = 0;  // the candidate's CPU time in the worker is capped by it too
};

struct CompileReply {
  uint64_t id = 0;
  bool rebuilt = false;
  MeasureError error = MeasureError::None;  // None, CompileError, CompileTimeout or InstantiationError
  std::string message;
  double compile_seconds = 0;
};

std::string encode_compile_request(const CompileRequest& request);
CompileRequest decode_compile_request(const std::string& line);
std::string encode_compile_reply(const CompileReply& reply);
CompileReply decode_compile_reply(const std::string& line);

// Inverse of error_name; UserError for an unknown name.
MeasureError parse_error_name(const std::string& name);

}  // namespace temper::measure
