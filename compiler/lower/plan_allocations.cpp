#include "compiler/lower/plan_allocations.h"

#include <map>
#include <unordered_map>

#include "compiler/ir/functor.h"

namespace temper {
namespace {

// Removes every Allocate, remembering the buffers in order.
class AllocationRemover : public IRMutator {
 public:
  using IRMutator::visit;
  std::vector<Buffer> buffers;

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    buffers.push_back(op->buffer);
    return mutate(op->body);
  }
};

bool may_hold_allocation(const ForNode* loop, const Buffer& b) {
  switch (loop->for_kind) {
    case ForKind::Serial:
    case ForKind::Parallel:
      return true;
    case ForKind::ThreadBinding:
      return !(b->scope == "shared" && loop->thread_tag.rfind("threadIdx", 0) == 0);
    default:
      return false;
  }
}

// For each buffer, the loops around all of its accesses (outermost first).
class CommonLoopFinder : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::unordered_map<const BufferNode*, std::vector<const ForNode*>> common;

 protected:
  void visit(const ForNode* op) override {
    loops_.push_back(op);
    IRVisitor::visit(op);
    loops_.pop_back();
  }
  void visit(const BufferLoadNode* op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }

 private:
  std::vector<const ForNode*> loops_;

  void use(const Buffer& b) {
    std::vector<const ForNode*> here;
    for (const ForNode* loop : loops_) {
      if (may_hold_allocation(loop, b)) here.push_back(loop);
    }
    auto [it, first] = common.emplace(b.get(), here);
    if (first) return;
    std::vector<const ForNode*>& path = it->second;
    size_t n = 0;
    while (n < path.size() && n < here.size() && path[n] == here[n]) ++n;
    path.resize(n);
  }
};

class AllocationPlacer : public IRMutator {
 public:
  explicit AllocationPlacer(std::map<const ForNode*, std::vector<Buffer>> at_loop) : at_loop_(std::move(at_loop)) {}
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    auto it = at_loop_.find(op);
    if (it == at_loop_.end()) return s;
    auto* loop = s.as<ForNode>();
    return make_for(loop->loop_var, loop->min, loop->extent, loop->for_kind, wrap(it->second, loop->body),
                    loop->thread_tag, loop->annotations);
  }

  static Stmt wrap(const std::vector<Buffer>& buffers, Stmt body) {
    for (size_t i = buffers.size(); i-- > 0;) body = allocate(buffers[i], body);
    return body;
  }

 private:
  std::map<const ForNode*, std::vector<Buffer>> at_loop_;
};

}  // namespace

PrimFunc plan_allocations(const PrimFunc& f) {
  AllocationRemover remover;
  PrimFunc out = f;
  out.body = remover.mutate(f.body);
  if (remover.buffers.empty()) return f;
  CommonLoopFinder finder;
  finder.visit(out.body);
  std::map<const ForNode*, std::vector<Buffer>> at_loop;
  std::vector<Buffer> at_root;
  for (const Buffer& b : remover.buffers) {
    auto it = finder.common.find(b.get());
    if (it == finder.common.end()) continue;  // never used
    if (it->second.empty()) {
      at_root.push_back(b);
    } else {
      at_loop[it->second.back()].push_back(b);
    }
  }
  // The loops are found by address in the tree the finder walked, so the placer walks
  // that same tree.
  out.body = AllocationPlacer::wrap(at_root, AllocationPlacer(std::move(at_loop)).mutate(out.body));
  return out;
}

}  // namespace temper
