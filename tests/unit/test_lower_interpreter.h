// A small interpreter of Temper IR, for the lowering tests: it runs a PrimFunc (blocks
// included) on host arrays, so a test can check that a pass computes the same values.
// Every element is held as a double (exact for float32 and for integers below 2^53);
// float32 arithmetic rounds to float after each operation, like compiled code. Every
// access is bounds-checked, and fresh allocations hold NaN, so a pass that shrinks a
// buffer too much or reads before writing shows up as an exception or a NaN.
#pragma once

#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/printer.h"

namespace temper::test {

class Interpreter {
 public:
  // Runs f with params[i] as the storage of f.params[i] (row-major, one double per element).
  void run(const PrimFunc& f, std::vector<std::vector<double>*> params) {
    if (params.size() != f.params.size()) throw std::runtime_error("wrong number of arguments");
    for (size_t i = 0; i < params.size(); ++i) {
      storage_[f.params[i].get()] = params[i];
      if (static_cast<int64_t>(params[i]->size()) != size_of(f.params[i])) {
        throw std::runtime_error("argument " + f.params[i]->name + " has the wrong size");
      }
    }
    exec(f.body);
  }

 private:
  using Lanes = std::vector<double>;
  std::unordered_map<const BufferNode*, std::vector<double>*> storage_;
  std::vector<std::unique_ptr<std::vector<double>>> owned_;
  std::unordered_map<const VarNode*, Lanes> env_;

  int64_t size_of(const Buffer& b) {
    int64_t n = 1;
    for (const Expr& d : b->shape) n *= static_cast<int64_t>(scalar(d));
    return n;
  }

  double scalar(const Expr& e) {
    Lanes v = eval(e);
    if (v.size() != 1) throw std::runtime_error("expected a scalar: " + to_string(e));
    return v[0];
  }

  static double to_type(DataType t, double v) {
    if (t.is_float()) return t.bits() == 32 ? static_cast<double>(static_cast<float>(v)) : v;
    if (t.is_bool()) return v != 0 ? 1 : 0;
    if (t.is_integer() && t.bits() < 64) {
      // Wrap like two's complement hardware.
      int64_t x = static_cast<int64_t>(v);
      int64_t m = int64_t{1} << t.bits();
      x = ((x % m) + m) % m;
      if (t.is_int() && x >= m / 2) x -= m;
      return static_cast<double>(x);
    }
    return v;
  }

  static double floordiv(double a, double b) { return std::floor(a / b); }

  static double binary(NodeKind k, DataType t, double a, double b) {
    bool f = t.is_float();
    switch (k) {
      case NodeKind::Add:
        return a + b;
      case NodeKind::Sub:
        return a - b;
      case NodeKind::Mul:
        return a * b;
      case NodeKind::Div:
        return f ? a / b : std::trunc(a / b);
      case NodeKind::Mod:
        return std::fmod(a, b);
      case NodeKind::FloorDiv:
        return floordiv(a, b);
      case NodeKind::FloorMod:
        return a - floordiv(a, b) * b;
      case NodeKind::Min:
        return std::min(a, b);
      case NodeKind::Max:
        return std::max(a, b);
      case NodeKind::EQ:
        return a == b;
      case NodeKind::NE:
        return a != b;
      case NodeKind::LT:
        return a < b;
      case NodeKind::LE:
        return a <= b;
      case NodeKind::GT:
        return a > b;
      case NodeKind::GE:
        return a >= b;
      case NodeKind::And:
        return a != 0 && b != 0;
      case NodeKind::Or:
        return a != 0 || b != 0;
      default:
        throw std::runtime_error("not a binary node");
    }
  }

  static double call(const std::string& name, const Lanes& args, size_t lane) {
    double x = args.empty() ? 0 : args[lane];
    if (name == "exp") return std::exp(x);
    if (name == "sqrt") return std::sqrt(x);
    if (name == "tanh") return std::tanh(x);
    if (name == "fabs") return std::fabs(x);
    throw std::runtime_error("the test interpreter has no function " + name);
  }

  std::vector<double>& data(const Buffer& b) {
    auto it = storage_.find(b.get());
    if (it == storage_.end()) throw std::runtime_error("buffer " + b->name + " is not allocated");
    return *it->second;
  }

  // The flat element offsets of an access, one per lane.
  std::vector<int64_t> offsets(const Buffer& b, const std::vector<Expr>& indices) {
    std::vector<Lanes> idx;
    size_t lanes = 1;
    for (const Expr& i : indices) {
      idx.push_back(eval(i));
      lanes = std::max(lanes, idx.back().size());
    }
    std::vector<int64_t> out(lanes, 0);
    for (size_t l = 0; l < lanes; ++l) {
      if (indices.size() == 1 && b.ndim() != 1) {
        out[l] = static_cast<int64_t>(idx[0][idx[0].size() == 1 ? 0 : l]);
        continue;
      }
      for (size_t d = 0; d < indices.size(); ++d) {
        out[l] = out[l] * static_cast<int64_t>(scalar(b->shape[d])) +
                 static_cast<int64_t>(idx[d][idx[d].size() == 1 ? 0 : l]);
      }
    }
    int64_t size = static_cast<int64_t>(data(b).size());
    for (int64_t o : out) {
      if (o < 0 || o >= size) {
        throw std::out_of_range("access of " + b->name + " at " + std::to_string(o) + " outside [0, " +
                                std::to_string(size) + ")");
      }
    }
    return out;
  }

  Lanes eval(const Expr& e) {
    DataType t = e.dtype();
    switch (e.kind()) {
      case NodeKind::IntImm:
        return {static_cast<double>(e.as<IntImmNode>()->value)};
      case NodeKind::FloatImm:
        return {e.as<FloatImmNode>()->value};
      case NodeKind::Var: {
        auto it = env_.find(e.as<VarNode>());
        if (it == env_.end()) throw std::runtime_error("unbound variable " + e.as<VarNode>()->name);
        return it->second;
      }
      case NodeKind::Cast: {
        Lanes v = eval(e.as<CastNode>()->value);
        bool from_float = e.as<CastNode>()->value.dtype().is_float();
        for (double& x : v) x = to_type(t, (from_float && !t.is_float()) ? std::trunc(x) : x);
        return v;
      }
      case NodeKind::Not: {
        Lanes v = eval(e.as<NotNode>()->a);
        for (double& x : v) x = x == 0;
        return v;
      }
      case NodeKind::Select: {
        auto* op = e.as<SelectNode>();
        Lanes c = eval(op->condition), a = eval(op->true_value), b = eval(op->false_value);
        for (size_t l = 0; l < a.size(); ++l) a[l] = c[c.size() == 1 ? 0 : l] != 0 ? a[l] : b[l];
        return a;
      }
      case NodeKind::Ramp: {
        auto* op = e.as<RampNode>();
        double base = scalar(op->base), stride = scalar(op->stride);
        Lanes v(op->lanes);
        for (int l = 0; l < op->lanes; ++l) v[l] = base + l * stride;
        return v;
      }
      case NodeKind::Broadcast: {
        auto* op = e.as<BroadcastNode>();
        return Lanes(op->lanes, scalar(op->value));
      }
      case NodeKind::Let: {
        auto* op = e.as<LetNode>();
        env_[op->var.get()] = eval(op->value);
        Lanes v = eval(op->body);
        env_.erase(op->var.get());
        return v;
      }
      case NodeKind::Call: {
        auto* op = e.as<CallNode>();
        Lanes arg = op->args.empty() ? Lanes{} : eval(op->args[0]);
        Lanes v(t.lanes());
        for (size_t l = 0; l < v.size(); ++l) v[l] = to_type(t, call(op->name, arg, l));
        return v;
      }
      case NodeKind::BufferLoad: {
        auto* op = e.as<BufferLoadNode>();
        std::vector<int64_t> at = offsets(op->buffer, op->indices);
        Lanes v;
        for (int64_t o : at) v.push_back(data(op->buffer)[o]);
        return v;
      }
      default: {
        auto [a, b] = operands(e);
        if (!a.defined()) throw std::runtime_error("cannot evaluate " + to_string(e));
        Lanes x = eval(a), y = eval(b);
        DataType ot = a.dtype();
        for (size_t l = 0; l < x.size(); ++l) x[l] = to_type(t, binary(e.kind(), ot, x[l], y[l]));
        return x;
      }
    }
  }

  static std::pair<Expr, Expr> operands(const Expr& e) {
    std::pair<Expr, Expr> r;
    dispatch(e.get(), [&](const auto* op) {
      if constexpr (requires {
                      op->a;
                      op->b;
                    })
        r = {op->a, op->b};
    });
    return r;
  }

  void allocate_buffer(const Buffer& b) {
    owned_.push_back(std::make_unique<std::vector<double>>(size_of(b), std::nan("")));
    storage_[b.get()] = owned_.back().get();
  }

  void exec(const Stmt& s) {
    switch (s.kind()) {
      case NodeKind::BufferStore: {
        auto* op = s.as<BufferStoreNode>();
        Lanes v = eval(op->value);
        std::vector<int64_t> at = offsets(op->buffer, op->indices);
        for (size_t l = 0; l < at.size(); ++l) data(op->buffer)[at[l]] = to_type(op->buffer->dtype, v[l]);
        return;
      }
      case NodeKind::Evaluate:
        eval(s.as<EvaluateNode>()->value);
        return;
      case NodeKind::LetStmt: {
        auto* op = s.as<LetStmtNode>();
        env_[op->var.get()] = eval(op->value);
        exec(op->body);
        env_.erase(op->var.get());
        return;
      }
      case NodeKind::For: {
        auto* op = s.as<ForNode>();
        double min = scalar(op->min), extent = scalar(op->extent);
        for (double i = min; i < min + extent; ++i) {
          env_[op->loop_var.get()] = {i};
          exec(op->body);
        }
        env_.erase(op->loop_var.get());
        return;
      }
      case NodeKind::IfThenElse: {
        auto* op = s.as<IfThenElseNode>();
        if (scalar(op->condition) != 0) {
          exec(op->then_case);
        } else if (op->else_case.defined()) {
          exec(op->else_case);
        }
        return;
      }
      case NodeKind::SeqStmt:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) exec(x);
        return;
      case NodeKind::Allocate: {
        auto* op = s.as<AllocateNode>();
        allocate_buffer(op->buffer);
        exec(op->body);
        storage_.erase(op->buffer.get());
        return;
      }
      case NodeKind::BlockRealize: {
        auto* op = s.as<BlockRealizeNode>();
        if (scalar(op->predicate) == 0) return;
        auto* block = op->block.as<BlockNode>();
        bool first = true;
        for (size_t i = 0; i < block->iter_vars.size(); ++i) {
          const IterVar& iv = block->iter_vars[i];
          double v = scalar(op->iter_values[i]);
          env_[iv.var.get()] = {v};
          if (iv.kind == IterKind::Reduce && v != scalar(iv.dom.min)) first = false;
        }
        for (const Buffer& b : block->alloc_buffers) allocate_buffer(b);
        if (block->init.defined() && first) exec(block->init);
        exec(block->body);
        return;
      }
      default:
        throw std::runtime_error(std::string("cannot execute ") + node_kind_name(s.kind()));
    }
  }
};

// Deterministic test data: a few distinct small values per element.
inline std::vector<double> test_data(size_t n, int seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(static_cast<int>((i * 7 + seed * 13) % 17) - 8) / 4;
  return v;
}

}  // namespace temper::test
