#include "compiler/lower/vectorize_loops.h"

#include <map>
#include <unordered_map>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"

namespace temper {
namespace {

// Why a loop cannot be vectorized; caught where the loop is rebuilt as serial.
struct CannotVectorize {
  std::string reason;
};

// Checks, before any rewriting, that lanes cannot see each other's writes in a new
// order: every load and store of a stored buffer uses one index expression.
class LaneConflictChecker : public IRVisitor {
 public:
  using IRVisitor::visit;

  void check(const Stmt& body) {
    visit(body);
    for (const auto& [buffer, indices] : loads_) {
      auto it = stores_.find(buffer);
      if (it == stores_.end()) continue;
      for (const std::vector<Expr>* index : indices) conflict_unless_same(buffer, *index, *it->second);
    }
  }

 protected:
  void visit(const BufferLoadNode* op) override {
    loads_[op->buffer.get()].push_back(&op->indices);
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    auto [it, first] = stores_.emplace(op->buffer.get(), &op->indices);
    if (!first) conflict_unless_same(op->buffer.get(), op->indices, *it->second);
    IRVisitor::visit(op);
  }

 private:
  std::map<const BufferNode*, std::vector<const std::vector<Expr>*>> loads_;
  std::map<const BufferNode*, const std::vector<Expr>*> stores_;

  static void conflict_unless_same(const BufferNode* b, const std::vector<Expr>& x, const std::vector<Expr>& y) {
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i) same = structural_equal(x[i], y[i], /*map_vars=*/false);
    if (!same) throw CannotVectorize{str("buffer ", b->name, " is stored and accessed at different indices")};
  }
};

// Rewrites a loop body with the loop variable as a ramp. Every expression comes back
// either unchanged (it does not depend on the variable) or with `lanes` lanes.
class Vectorizer : public IRMutator {
 public:
  Vectorizer(const Var& v, const Expr& min, int lanes) : var_(v), lanes_(lanes) {
    ramp_ = ramp(min, make_const(min.dtype(), int64_t{1}), lanes);
  }
  using IRMutator::mutate;
  using IRMutator::visit;

 protected:
  Expr visit(const VarNode* op, const Expr& self) override {
    if (op == var_.get()) return ramp_;
    auto it = vector_vars_.find(op);
    return it == vector_vars_.end() ? self : it->second;
  }
  Expr visit(const RampNode* op, const Expr&) override { throw nested(); }
  Expr visit(const BroadcastNode* op, const Expr&) override { throw nested(); }
  Expr visit(const ReduceNode* op, const Expr&) override { throw CannotVectorize{"a Reduce is left in the body"}; }

  Expr visit(const CastNode* op, const Expr& self) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    return cast(op->dtype.with_lanes(v.dtype().lanes()), v);
  }

#define TEMPER_VECTORIZE_BINARY(K)                                   \
  Expr visit(const K##Node* op, const Expr& self) override {         \
    Expr a = mutate(op->a);                                          \
    Expr b = mutate(op->b);                                          \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;           \
    return make_binary(NodeKind::K, a, b); /* broadcasts a scalar */ \
  }
  TEMPER_BINARY_NODES(TEMPER_VECTORIZE_BINARY)
#undef TEMPER_VECTORIZE_BINARY

  Expr visit(const NotNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? self : !a;
  }

  Expr visit(const SelectNode* op, const Expr& self) override {
    Expr c = mutate(op->condition);
    Expr t = mutate(op->true_value);
    Expr f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return select(widen(c), widen(t), widen(f));
  }

  Expr visit(const LetNode* op, const Expr& self) override {
    Expr value = mutate(op->value);
    Var v = bind_let(op->var, value);
    Expr body = mutate(op->body);
    if (v.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) return self;
    return let(v, value, body);
  }

  Expr visit(const CallNode* op, const Expr& self) override {
    std::vector<Expr> args;
    bool vector = false;
    for (const Expr& a : op->args) {
      args.push_back(mutate(a));
      vector = vector || args.back().dtype().is_vector();
    }
    if (!vector) return self;
    if (op->call_kind != CallKind::Pure) {
      throw CannotVectorize{str("call to ", op->name, " would need vector arguments")};
    }
    for (Expr& a : args) a = widen(a);
    return call_pure(op->dtype.with_lanes(lanes_), op->name, args);
  }

  Expr visit(const BufferLoadNode* op, const Expr& self) override {
    std::vector<Expr> indices;
    bool vector = false;
    for (const Expr& i : op->indices) {
      indices.push_back(mutate(i));
      vector = vector || indices.back().dtype().is_vector();
    }
    if (!vector) return self;
    for (Expr& i : indices) i = widen(i);
    return load(op->buffer, indices);
  }

  Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
    std::vector<Expr> indices;
    bool vector = false;
    for (const Expr& i : op->indices) {
      indices.push_back(mutate(i));
      vector = vector || indices.back().dtype().is_vector();
    }
    Expr value = mutate(op->value);
    if (!vector) {
      throw CannotVectorize{str("the store into ", op->buffer->name, " has an index that does not depend on ",
                                var_->name, " (a reduction across lanes)")};
    }
    for (Expr& i : indices) i = widen(i);
    return store(op->buffer, widen(value), indices);
  }

  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate(op->condition);
    if (c.dtype().is_vector()) {
      throw CannotVectorize{
          str("the condition ", op->condition, " depends on ", var_->name, " (masked stores are not supported)")};
    }
    return IRMutator::visit(op, self);
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    if (mutate(op->min).dtype().is_vector() || mutate(op->extent).dtype().is_vector()) {
      throw CannotVectorize{str("the bounds of the inner loop ", op->loop_var->name, " depend on ", var_->name)};
    }
    if (op->for_kind == ForKind::Parallel || op->for_kind == ForKind::ThreadBinding) {
      throw CannotVectorize{str("the inner loop ", op->loop_var->name, " is ", for_kind_name(op->for_kind))};
    }
    return IRMutator::visit(op, self);
  }

  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Expr value = mutate(op->value);
    Var v = bind_let(op->var, value);
    Stmt body = mutate(op->body);
    if (v.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(v, value, body);
  }

  Stmt visit(const AllocateNode* op, const Stmt&) override {
    throw CannotVectorize{str("the allocation of ", op->buffer->name, " inside it would need a copy per lane")};
  }
  Stmt visit(const BlockRealizeNode*, const Stmt&) override {
    throw CannotVectorize{"a block is left in the body"};
  }

 private:
  Var var_;
  int lanes_;
  Expr ramp_;
  std::unordered_map<const VarNode*, Expr> vector_vars_;

  CannotVectorize nested() const {
    return {"the body already holds vector operations"};
  }

  Expr widen(const Expr& e) const {
    return e.dtype().is_vector() ? e : broadcast(e, lanes_);
  }

  // A let whose value became a vector binds a new vector variable.
  Var bind_let(const Var& v, const Expr& value) {
    if (!value.dtype().is_vector()) return v;
    Var vector_var(v->name, value.dtype());
    vector_vars_[v.get()] = vector_var;
    return vector_var;
  }
};

class LoopVectorizer : public IRMutator {
 public:
  explicit LoopVectorizer(std::string func_name) : func_name_(std::move(func_name)) {}
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);  // inner loops first
    auto* loop = s.as<ForNode>();
    if (loop->for_kind != ForKind::Vectorized) return s;
    try {
      const int64_t* extent = as_const_int(loop->extent);
      if (!extent) throw CannotVectorize{str("its extent ", loop->extent, " is not a constant")};
      if (*extent <= 1) return serial(loop);
      LaneConflictChecker().check(loop->body);
      return Vectorizer(loop->loop_var, loop->min, static_cast<int>(*extent)).mutate(loop->body);
    } catch (const CannotVectorize& e) {
      warn(str("vectorize_loops: in ", func_name_, ", loop ", loop->loop_var->name, " cannot be vectorized: ", e.reason,
               "; it stays a serial loop"));
      return serial(loop);
    }
  }

 private:
  std::string func_name_;

  static Stmt serial(const ForNode* loop) {
    return make_for(loop->loop_var, loop->min, loop->extent, ForKind::Serial, loop->body, loop->thread_tag,
                    loop->annotations);
  }
};

}  // namespace

PrimFunc vectorize_loops(const PrimFunc& f) {
  return LoopVectorizer(f.name).mutate(f);
}

}  // namespace temper
