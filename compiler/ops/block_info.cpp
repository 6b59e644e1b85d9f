#include "compiler/ops/block_info.h"

#include <functional>

#include "compiler/ir/functor.h"

namespace temper::ops {

std::vector<BlockInfo> collect_blocks(const PrimFunc& f) {
  std::vector<BlockInfo> blocks;
  std::vector<const ForNode*> loops;
  // Walks the program keeping the stack of enclosing loops.
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined()) return;
    if (auto* loop = s.as<ForNode>()) {
      loops.push_back(loop);
      walk(loop->body);
      loops.pop_back();
    } else if (auto* sq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : sq->seq) walk(x);
    } else if (auto* a = s.as<AllocateNode>()) {
      walk(a->body);
    } else if (auto* l = s.as<LetStmtNode>()) {
      walk(l->body);
    } else if (auto* i = s.as<IfThenElseNode>()) {
      walk(i->then_case);
      walk(i->else_case);
    } else if (auto* r = s.as<BlockRealizeNode>()) {
      auto* b = r->block.as<BlockNode>();
      BlockInfo info;
      info.name = b->name;
      info.is_reduction = b->init.defined();
      if (!b->writes.empty()) info.output = b->writes[0].buffer;
      for (const Buffer& p : f.params) info.writes_param |= p.same_as(info.output);
      for (const ForNode* loop : loops) {
        bool reduce = false;
        for (size_t v = 0; v < b->iter_vars.size(); ++v) {
          if (b->iter_vars[v].kind != IterKind::Reduce) continue;
          post_order_visit(r->iter_values[v], [&](const Node* n) { reduce |= n == loop->loop_var.get(); });
        }
        info.loop_is_reduce.push_back(reduce);
      }
      blocks.push_back(info);
      walk(b->body);
    }
  };
  walk(f.body);
  // Consumers: blocks whose read regions include another block's output.
  post_order_visit(f.body, [&](const Node* n) {
    if (n->kind != NodeKind::Block) return;
    auto* b = static_cast<const BlockNode*>(n);
    for (const BufferRegion& r : b->reads) {
      for (BlockInfo& p : blocks) {
        if (p.output.defined() && p.output.same_as(r.buffer) && p.name != b->name) p.consumers.push_back(b->name);
      }
    }
  });
  return blocks;
}

BlockInfo block_info(const Schedule& s, const std::string& name) {
  for (BlockInfo& b : collect_blocks(s.func())) {
    if (b.name == name) return b;
  }
  TEMPER_CHECK(false, "no block ", name);
  return {};
}

}  // namespace temper::ops
