#include "compiler/lower/insert_barriers.h"

#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/substitute.h"

namespace temper {

Stmt thread_barrier() {
  return evaluate(call_intrinsic(DataType::int32(), kThreadBarrier, {}));
}

bool is_thread_barrier(const Stmt& s) {
  auto* e = s.as<EvaluateNode>();
  auto* call = e ? e->value.as<CallNode>() : nullptr;
  return call && call->call_kind == CallKind::Intrinsic && call->name == kThreadBarrier;
}

namespace {

// The shared buffers a statement reads and writes.
struct SharedAccesses {
  std::set<const BufferNode*> reads, writes;

  explicit SharedAccesses(const Stmt& s) {
    post_order_visit(s, [&](const Node* n) {
      if (n->kind == NodeKind::BufferLoad) {
        auto* load = static_cast<const BufferLoadNode*>(n);
        if (load->buffer->scope == "shared") reads.insert(load->buffer.get());
      } else if (n->kind == NodeKind::BufferStore) {
        auto* st = static_cast<const BufferStoreNode*>(n);
        if (st->buffer->scope == "shared") writes.insert(st->buffer.get());
      }
    });
  }
};

bool intersect(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
  for (const BufferNode* x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

class BarrierInserter : public IRMutator {
 public:
  BarrierInserter(const std::array<int64_t, 3>& block, const std::string& func_name)
      : block_(block), func_name_(func_name) {}
  using IRMutator::visit;

  Stmt visit(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> out;
    std::set<const BufferNode*> written, read;  // since the last barrier
    bool changed = false;
    for (const Stmt& child : op->seq) {
      Stmt c = mutate(child);
      changed |= !c.same_as(child);
      if (is_thread_barrier(c)) {
        written.clear();
        read.clear();
      } else {
        SharedAccesses a(c);
        if (intersect(a.reads, written) || intersect(a.writes, read)) {
          out.push_back(barrier_here());
          changed = true;
          written.clear();
          read.clear();
        }
        written.insert(a.writes.begin(), a.writes.end());
        read.insert(a.reads.begin(), a.reads.end());
      }
      out.push_back(c);
    }
    return changed ? seq(out) : self;
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    bool guarded = false;
    if (op->for_kind == ForKind::ThreadBinding && op->thread_tag.rfind("threadIdx", 0) == 0) {
      thread_vars_.insert(op->loop_var.get());
      const int64_t* extent = as_const_int(op->extent);
      guarded = !extent || *extent < block_[op->thread_tag.back() - 'x'];
    }
    if (guarded)
      divergent_.push_back(str("the loop '", op->loop_var.name(), "' bound to ", op->thread_tag, " with extent ",
                               op->extent, ", below the block's"));
    Stmt body = mutate(op->body);
    if (op->for_kind == ForKind::Serial) {
      SharedAccesses a(body);
      if (intersect(a.reads, a.writes)) body = seq({body, barrier_here()});
    }
    if (guarded) divergent_.pop_back();
    return body.same_as(op->body)
               ? self
               : make_for(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, op->annotations);
  }

  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    bool per_thread = uses_var_if(op->condition, [&](const VarNode* v) { return thread_vars_.count(v) > 0; });
    if (per_thread) divergent_.push_back(str("the condition '", op->condition, "' on a thread index"));
    Stmt result = IRMutator::visit(op, self);
    if (per_thread) divergent_.pop_back();
    return result;
  }

 private:
  std::array<int64_t, 3> block_;
  const std::string& func_name_;
  std::set<const VarNode*> thread_vars_;
  std::vector<std::string> divergent_;  // why the code being visited runs in only some threads

  Stmt barrier_here() const {
    if (!divergent_.empty()) {
      throw UserError(str(func_name_, ": shared memory needs a barrier under ", divergent_.back(),
                          ", which only some threads of a block reach; bind loops that stage shared memory with "
                          "the block's full thread extents"));
    }
    return thread_barrier();
  }
};

}  // namespace

Stmt insert_barriers(const Stmt& kernel, const std::array<int64_t, 3>& block, const std::string& func_name) {
  return BarrierInserter(block, func_name).mutate(kernel);
}

}  // namespace temper
