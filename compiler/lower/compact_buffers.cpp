#include "compiler/lower/compact_buffers.h"

#include "compiler/ir/functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/linear_sum.h"

namespace temper {
namespace {

// One index of one access: offset (over outer variables only) + a value in inner.
struct IndexPart {
  Expr offset;
  Interval inner;
  Interval relaxed;  // bounds of the whole index with every variable over its range
};

// Collects, per dimension, the parts of every index of one buffer under an allocation.
class AccessCollector : public AnalyzingVisitor {
 public:
  AccessCollector(Analyzer& analyzer, const Buffer& buffer)
      : AnalyzingVisitor(analyzer), buffer_(buffer), dims_(buffer.ndim()) {}
  using AnalyzingVisitor::visit;

  bool flat_access = false;
  // The address of an element escapes (address_of, a micro-kernel's operand): the callee
  // reaches elements the IR does not show, through strides computed from the shape.
  bool address_taken = false;
  const std::vector<std::vector<IndexPart>>& dims() const { return dims_; }
  // v, bound outside the allocation, varies within it all the same (a thread index, for
  // a buffer that all threads of a block share).
  void vary(const Var& v) { inner_.insert(v.get()); }

 protected:
  void visit(const LetNode* op) override {
    inner_.insert(op->var.get());
    AnalyzingVisitor::visit(op);
  }
  void visit(const BufferLoadNode* op) override {
    record(op->buffer, op->indices);
    AnalyzingVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    record(op->buffer, op->indices);
    AnalyzingVisitor::visit(op);
  }
  void visit(const CallNode* op) override {
    if (op->call_kind == CallKind::Intrinsic && op->name == "address_of") {
      auto* element = op->args[0].as<BufferLoadNode>();
      address_taken = address_taken || (element && element->buffer.same_as(buffer_));
    }
    AnalyzingVisitor::visit(op);
  }

 private:
  Buffer buffer_;
  std::vector<std::vector<IndexPart>> dims_;

  void record(const Buffer& b, const std::vector<Expr>& indices) {
    if (!b.same_as(buffer_)) return;
    if (static_cast<int>(indices.size()) != buffer_.ndim()) {
      flat_access = true;
      return;
    }
    for (size_t d = 0; d < indices.size(); ++d) dims_[d].push_back(split(indices[d]));
  }

  // Whether e has one value throughout the allocation: no variable bound inside it,
  // and no load or call (the body may write what a load reads).
  bool is_invariant(const Expr& e) const {
    bool invariant = true;
    post_order_visit(e, [&](const Node* n) {
      if (n->kind == NodeKind::BufferLoad || n->kind == NodeKind::Call) invariant = false;
      if (n->kind == NodeKind::Var && inner_.count(static_cast<const VarNode*>(n))) invariant = false;
    });
    return invariant;
  }

  IndexPart split(const Expr& index) {
    Interval relaxed = analyzer_.bounds(index);
    std::optional<OffsetBounds> s = offset_bounds(
        index, [&](const Expr& term) { return !is_invariant(term); }, analyzer_);
    if (!s) return {make_const(index.dtype(), int64_t{0}), relaxed, relaxed};
    return {s->offset, s->rest, relaxed};
  }
};

struct DimRegion {
  Expr min;
  Expr extent;
};

// The region of one dimension covering all parts, or nullopt when unbounded.
std::optional<DimRegion> region_of(const std::vector<IndexPart>& parts) {
  bool same_offset = true;
  for (const IndexPart& p : parts) {
    same_offset = same_offset && structural_equal(p.offset, parts[0].offset, /*map_vars=*/false);
  }
  Interval r = same_offset ? parts[0].inner : parts[0].relaxed;
  for (const IndexPart& p : parts) r = interval_union(r, same_offset ? p.inner : p.relaxed);
  if (!r.is_bounded() || r.max < r.min) return std::nullopt;
  DataType t = parts[0].offset.dtype();
  Expr low = make_const(t, r.min);
  Expr min = same_offset ? (is_zero(parts[0].offset) ? low : parts[0].offset + low) : low;
  return DimRegion{min, make_const(t, r.max - r.min + 1)};
}

class BufferCompactor : public AnalyzingMutator {
 public:
  using AnalyzingMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    bool thread = op->for_kind == ForKind::ThreadBinding && op->thread_tag.rfind("threadIdx", 0) == 0;
    if (thread) thread_vars_.push_back(op->loop_var);
    Stmt s = AnalyzingMutator::visit(op, self);
    if (thread) thread_vars_.pop_back();
    return s;
  }

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    const Buffer& buffer = op->buffer;
    AccessCollector collector(analyzer_, buffer);
    if (buffer->scope == "shared") {
      for (const Var& v : thread_vars_) collector.vary(v);
    }
    collector.visit(body);
    if (collector.flat_access || collector.address_taken || collector.dims().empty() || collector.dims()[0].empty()) {
      return body.same_as(op->body) ? self : allocate(buffer, body);
    }
    std::vector<Expr> shape = buffer->shape;
    std::vector<Expr> offsets;
    bool changed = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::optional<DimRegion> r = region_of(collector.dims()[d]);
      bool smaller = r && r->extent.dtype() == shape[d].dtype() &&
                     (!as_const_int(shape[d]) || *as_const_int(r->extent) < *as_const_int(shape[d]));
      if (smaller) {
        shape[d] = r->extent;
        offsets.push_back(r->min);
        changed = true;
      } else {
        offsets.push_back(make_const(shape[d].dtype(), int64_t{0}));
      }
    }
    if (!changed) return body.same_as(op->body) ? self : allocate(buffer, body);
    Buffer compact = buffer.with_shape(shape);
    return allocate(compact, AccessRemapper(buffer, compact, offsets, analyzer_).mutate(body));
  }

 private:
  std::vector<Var> thread_vars_;  // of the threadIdx loops around the statement being visited

  class AccessRemapper : public IRMutator {
   public:
    AccessRemapper(Buffer from, Buffer to, std::vector<Expr> offsets, Analyzer& analyzer)
        : from_(std::move(from)), to_(std::move(to)), offsets_(std::move(offsets)), analyzer_(analyzer) {}
    using IRMutator::visit;

    Expr visit(const BufferLoadNode* op, const Expr& self) override {
      Expr e = IRMutator::visit(op, self);
      auto* load_op = e.as<BufferLoadNode>();
      if (!load_op->buffer.same_as(from_)) return e;
      return load(to_, shifted(load_op->indices));
    }
    Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
      Stmt s = IRMutator::visit(op, self);
      auto* store_op = s.as<BufferStoreNode>();
      if (!store_op->buffer.same_as(from_)) return s;
      return store(to_, store_op->value, shifted(store_op->indices));
    }

   private:
    Buffer from_, to_;
    std::vector<Expr> offsets_;
    Analyzer& analyzer_;

    std::vector<Expr> shifted(const std::vector<Expr>& indices) {
      std::vector<Expr> out;
      for (size_t d = 0; d < indices.size(); ++d) {
        out.push_back(is_zero(offsets_[d]) ? indices[d] : analyzer_.simplify(indices[d] - offsets_[d]));
      }
      return out;
    }
  };
};

}  // namespace

PrimFunc compact_buffers(const PrimFunc& f) {
  return BufferCompactor().mutate(f);
}

}  // namespace temper
