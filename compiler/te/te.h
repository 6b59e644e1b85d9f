// Tensor expressions: the language operators are written in.
//
//   Tensor A = placeholder({M, K}, DataType::float32(), "A");
//   Tensor B = placeholder({K, N}, DataType::float32(), "B");
//   IterVar k = reduce_axis({0, K}, "k");
//   Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
//   PrimFunc f = create_prim_func({A, B, C}, "matmul");
//
// Every tensor owns a Buffer from the start; A(i, k) is a BufferLoad of that buffer.
// create_prim_func turns each compute stage, in dependency order, into a loop nest
// around one Block (see ir.h) whose iteration variables are named "v" + axis name;
// stages that are not function arguments become Allocates at the top of the body.
// A reduction must be the outermost expression of a compute body.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper::te {

struct OperationNode;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const OperationNode> op) : op_(std::move(op)) {}

  const OperationNode* op() const { return op_.get(); }
  const std::shared_ptr<const OperationNode>& shared() const { return op_; }
  bool defined() const { return op_ != nullptr; }
  const Buffer& buffer() const;
  const std::vector<Expr>& shape() const;
  DataType dtype() const;
  const std::string& name() const;
  int ndim() const { return static_cast<int>(shape().size()); }

  // An element access; the number of indices must equal ndim().
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Args>
  Expr operator()(Args... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

 private:
  std::shared_ptr<const OperationNode> op_;
};

struct OperationNode {
  enum class Kind { Placeholder, Compute };
  Kind kind;
  Buffer buffer;               // holds name, dtype, shape
  std::vector<IterVar> axis;   // compute: the spatial axes, one per output dimension
  Expr body;                   // compute: the value at axis (a Reduce at the top, or not)
  std::vector<Tensor> inputs;  // compute: the tensors the body reads, in first-use order
  std::string tag;             // "injective", "reduction", "elemwise", ... for schedules
};

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

// Body over one Var per output dimension. Overloads for 1 to 5 dimensions take a
// lambda of that many Vars; the vector form takes any number.
Tensor compute(std::vector<Expr> shape, std::function<Expr(const std::vector<Var>&)> body, std::string name,
               std::string tag = "");
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var)> body, std::string name, std::string tag = "");
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var)> body, std::string name, std::string tag = "");
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var)> body, std::string name,
               std::string tag = "");
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var, Var)> body, std::string name,
               std::string tag = "");
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var, Var, Var)> body, std::string name,
               std::string tag = "");

IterVar reduce_axis(Range dom, std::string name);

Expr sum(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Expr max(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Expr min(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Expr prod(Expr source, std::vector<IterVar> axis, Expr where = Expr());

// Math calls; the argument must be floating point (UserError otherwise).
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sigmoid(Expr x);
Expr fabs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tan(Expr x);
Expr asin(Expr x);
Expr acos(Expr x);
Expr atan(Expr x);
Expr pow(Expr x, Expr y);

// Lowers the stages that produce `args`' computed tensors to one PrimFunc whose
// parameters are args' buffers in order. Every placeholder the computation reads must
// be in args (UserError naming it otherwise).
PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name);

}  // namespace temper::te
