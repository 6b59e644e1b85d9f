#include "compiler/lower/flatten_buffers.h"

#include <map>

#include "compiler/ir/functor.h"
#include "compiler/lower/analyzer.h"

namespace temper {
namespace {

class BufferFlattener : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    if (op->buffer.ndim() == 1) return IRMutator::visit(op, self);
    Expr size = make_const(op->buffer->shape.empty() ? DataType::int32() : op->buffer->shape[0].dtype(), int64_t{1});
    for (const Expr& d : op->buffer->shape) size = size * cast(size.dtype(), d);
    Buffer flat = op->buffer.with_shape({analyzer_.simplify(size)});
    flat_[op->buffer.get()] = flat;
    return allocate(flat, mutate(op->body));
  }

  Expr visit(const BufferLoadNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    auto* l = e.as<BufferLoadNode>();
    if (l->indices.size() == 1 && l->buffer.ndim() != 0 && !flat_.count(l->buffer.get())) return e;
    return load(flat_buffer(l->buffer), {flat_index(l->buffer, l->indices)});
  }

  Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    auto* st = s.as<BufferStoreNode>();
    if (st->indices.size() == 1 && st->buffer.ndim() != 0 && !flat_.count(st->buffer.get())) return s;
    return store(flat_buffer(st->buffer), st->value, {flat_index(st->buffer, st->indices)});
  }

 private:
  Analyzer analyzer_;
  std::map<const BufferNode*, Buffer> flat_;

  Buffer flat_buffer(const Buffer& b) {
    auto it = flat_.find(b.get());
    return it == flat_.end() ? b : it->second;
  }

  Expr flat_index(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.empty()) return make_const(DataType::int32(), int64_t{0});
    if (indices.size() == 1) return indices[0];  // already flat
    TEMPER_CHECK(static_cast<int>(indices.size()) == b.ndim(), "access of ", b->name, " with ", indices.size(),
                 " indices");
    // Horner form i0*n1 + i1, then *n2 + i2, ...; the simplifier expands it.
    Expr offset = indices[0];
    for (size_t d = 1; d < indices.size(); ++d) {
      DataType t = offset.dtype().element_of();
      offset = offset * cast(t, b->shape[d]) + indices[d];
    }
    return analyzer_.simplify(offset);
  }
};

}  // namespace

PrimFunc flatten_buffers(const PrimFunc& f) {
  return BufferFlattener().mutate(f);
}

}  // namespace temper
