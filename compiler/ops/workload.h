// Workloads: an operator and its parameters as one line of text, and the operator
// instance (tensors, PrimFunc, FLOP count, reference) that a workload stands for.
//
//   matmul:M=1024,N=1024,K=1024
//   conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1
//
// Syntax: `op:key=value,key=value,...`. Values are integers, lists of integers joined by
// 'x' (shape=1x64x56x56, stride=2x1), numbers (eps=1e-05), booleans (0/1, true/false) or
// names (layout=NHWC, dtype=int32, act=relu). Each op has a table of keys, some required,
// the others with defaults; `temper --help` shows it through op_usage(). Window lists
// take one value for all, or per dimension: stride/dilation/kernel are H or HxW; pad is
// P, PHxPW, or TOPxLEFTxBOTTOMxRIGHT.
//
// The canonical form (to_string) lists every key of the op, defaults included, in the
// table's order, with values normalised (true -> 1, 2x2 -> 2, 1e-5 -> 1e-05), so that two
// spellings of one workload have one string: the key of the tuning log.
//
// parse() checks syntax, keys and each value on its own; instantiate() builds the
// operator and reports what only the shapes together can tell (a kernel larger than the
// padded input, channels not divisible by groups). Both throw UserError saying what is
// wrong and what is accepted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/te/te.h"

namespace temper::ops {

struct Workload {
  std::string op;
  // Canonical: every key of the op, in the op's table order.
  std::vector<std::pair<std::string, std::string>> params;

  static Workload parse(const std::string& text);
  // The workload of `op` with `params` (any order, defaults omitted), checked and
  // canonicalised as parse() does.
  static Workload make(const std::string& op, const std::vector<std::pair<std::string, std::string>>& params);
  std::string to_string() const;

  // The value of key as written in params; UserError if the op has no such key.
  const std::string& get(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  // A list value ("2x3"; a single integer is a list of one).
  std::vector<int64_t> get_ints(const std::string& key) const;
  double get_float(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  // The "dtype" parameter.
  DataType dtype() const;

  bool operator==(const Workload&) const = default;
};

// The interval random test data for an input should be drawn from so that the op is
// defined and well conditioned (a divisor away from 0, a variance above 0). Integer
// inputs take whole numbers in the interval.
struct ValueRange {
  double low = -1.0;
  double high = 1.0;
};

// One concrete operator: the arrays it reads and writes, its PrimFunc, and a reference.
struct OpInstance {
  std::string name;  // the op; also the PrimFunc's name
  std::vector<te::Tensor> inputs;
  std::vector<te::Tensor> outputs;
  PrimFunc func;  // te::create_prim_func(inputs ++ outputs): parameters in that order
  // Arithmetic operations of one run: 2 per multiply-add, about one per elementwise
  // operation in the definition, 0 for pure data movement (transpose, pad, ...).
  double flops = 0;
  std::vector<ValueRange> input_ranges;  // one per input
  // The inputs a model holds as its weights (learned parameters: a conv's filters, a
  // dense layer's matrix and bias, a matmul's B). In a model they are constant, and cold in
  // cache at each inference (a model's weights exceed the caches; each layer's are read
  // once per run), so the measurer times a candidate with them evicted (RunnerOptions).
  std::vector<int> weight_inputs;
  // An absolute tolerance, as a fraction of the largest expected magnitude, for ops whose
  // float results carry the rounding of large intermediate terms (Winograd's transforms
  // scale by up to 64 and cancel); 0: the dtype's usual tolerances alone.
  double tolerance_of_largest = 0;
  // Computes the outputs from the inputs: dense row-major arrays of the tensors' shapes
  // and dtypes, in the order of `inputs` and `outputs`.
  std::function<void(const std::vector<const void*>& ins, const std::vector<void*>& outs)> reference;
};

OpInstance instantiate(const Workload& workload);

// The op names parse() accepts, in the order `temper --help` lists them.
std::vector<std::string> known_ops();
// A one-line description of op; UserError listing the known ops for any other name.
const std::string& op_doc(const std::string& op);
// The op's keys with their defaults, required keys first:
// "conv2d:N=<int>,C=<int>,...,stride=1,pad=0,dilation=1,groups=1,layout=NCHW|NHWC,dtype=float32|int32".
std::string op_usage(const std::string& op);

}  // namespace temper::ops
