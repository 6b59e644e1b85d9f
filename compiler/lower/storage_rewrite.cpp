#include "compiler/lower/storage_rewrite.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/ir/functor.h"

namespace temper {
namespace {

std::optional<int64_t> constant_size(const Buffer& b) {
  int64_t n = 1;
  for (const Expr& d : b->shape) {
    const int64_t* c = as_const_int(d);
    if (!c || __builtin_mul_overflow(n, *c, &n)) return std::nullopt;
  }
  return n;
}

// Replaces buffers by others in every load, store and allocation.
class BufferReplacer : public IRMutator {
 public:
  explicit BufferReplacer(std::map<const BufferNode*, Buffer> map) : map_(std::move(map)) {}
  using IRMutator::visit;

 protected:
  Buffer mutate_buffer(const Buffer& b) override {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }

 private:
  std::map<const BufferNode*, Buffer> map_;
};

// A buffer may be allocated at several places, each the scope of its own uses (the
// copies of a loop body that partition_loops and unroll_loops make share the body's
// buffers), so each allocation is promoted together with the uses inside it only.
class LocalPromoter : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    std::optional<int64_t> n = constant_size(op->buffer);
    int64_t bytes;
    if (op->buffer->scope == "global" && n && !__builtin_mul_overflow(*n, op->buffer->dtype.bytes(), &bytes) &&
        bytes <= kMaxLocalBytes) {
      Buffer local = op->buffer.with_scope("local");
      return allocate(local, BufferReplacer({{op->buffer.get(), local}}).mutate(body));
    }
    return body.same_as(op->body) ? self : allocate(op->buffer, body);
  }
};

// The indices of the statements of a sequence that use each buffer.
std::map<const BufferNode*, std::pair<size_t, size_t>> use_spans(const SeqStmtNode* seq) {
  std::map<const BufferNode*, std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < seq->seq.size(); ++i) {
    post_order_visit(seq->seq[i], [&](const Node* n) {
      const BufferNode* b = nullptr;
      if (n->kind == NodeKind::BufferLoad) b = static_cast<const BufferLoadNode*>(n)->buffer.get();
      if (n->kind == NodeKind::BufferStore) b = static_cast<const BufferStoreNode*>(n)->buffer.get();
      if (!b) return;
      auto [it, first] = spans.emplace(b, std::make_pair(i, i));
      if (!first) it->second.second = i;
    });
  }
  return spans;
}

class MemoryReuser : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    // The chain of Allocates directly nested here (outermost first), and what they wrap.
    std::vector<Buffer> chain;
    Stmt inner = self;
    while (auto* a = inner.as<AllocateNode>()) {
      chain.push_back(a->buffer);
      inner = a->body;
    }
    inner = mutate(inner);
    auto* seq = inner.as<SeqStmtNode>();
    std::map<const BufferNode*, Buffer> replace;
    if (seq && chain.size() > 1) replace = share(chain, use_spans(seq));
    Stmt body = replace.empty() ? inner : BufferReplacer(replace).mutate(inner);
    // A shared buffer is allocated once, at the place of its outermost member.
    std::vector<Buffer> allocations;
    std::set<const BufferNode*> placed;
    for (const Buffer& b : chain) {
      auto it = replace.find(b.get());
      const Buffer& a = it == replace.end() ? b : it->second;
      if (placed.insert(a.get()).second) allocations.push_back(a);
    }
    for (size_t i = allocations.size(); i-- > 0;) body = allocate(allocations[i], body);
    return body;
  }

 private:
  // Greedy interval packing: buffers in order of first use, each joins the first
  // compatible group whose last use ends before its first.
  static std::map<const BufferNode*, Buffer> share(
      const std::vector<Buffer>& chain, const std::map<const BufferNode*, std::pair<size_t, size_t>>& spans) {
    struct Group {
      std::vector<Buffer> members;
      int64_t size;
      size_t last_use;
    };
    std::vector<Buffer> order;
    for (const Buffer& b : chain) {
      if (spans.count(b.get()) && constant_size(b) && b.ndim() == 1) order.push_back(b);
    }
    std::stable_sort(order.begin(), order.end(), [&](const Buffer& x, const Buffer& y) {
      return spans.at(x.get()).first < spans.at(y.get()).first;
    });
    std::vector<Group> groups;
    for (const Buffer& b : order) {
      auto [first, last] = spans.at(b.get());
      auto home = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.last_use < first && g.members[0]->dtype == b->dtype && g.members[0]->scope == b->scope;
      });
      if (home == groups.end()) {
        groups.push_back({{b}, *constant_size(b), last});
        continue;
      }
      home->members.push_back(b);
      home->size = std::max(home->size, *constant_size(b));
      home->last_use = last;
    }
    std::map<const BufferNode*, Buffer> replace;
    for (const Group& g : groups) {
      if (g.members.size() < 2) continue;
      const Buffer& head = g.members[0];
      Buffer merged = head.with_shape({make_const(head->shape[0].dtype(), g.size)});
      for (const Buffer& m : g.members) replace[m.get()] = merged;
    }
    return replace;
  }
};

}  // namespace

PrimFunc storage_rewrite(const PrimFunc& f) {
  PrimFunc out = f;
  out.body = LocalPromoter().mutate(f.body);
  out.body = MemoryReuser().mutate(out.body);
  return out;
}

}  // namespace temper
