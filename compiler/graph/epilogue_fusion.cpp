#include "compiler/graph/epilogue_fusion.h"

#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/schedule_ir.h"

namespace temper::graph {
namespace {

struct BlockWrites {
  std::string name;
  std::vector<Buffer> writes;
};

// Every block of body, in program order.
std::vector<BlockWrites> blocks_of(const Stmt& body) {
  std::vector<BlockWrites> blocks;
  post_order_visit(body, [&](const temper::Node* n) {
    if (n->kind != NodeKind::Block) return;
    auto* b = static_cast<const BlockNode*>(n);
    BlockWrites w{b->name, {}};
    for (const BufferRegion& r : b->writes) w.writes.push_back(r.buffer);
    blocks.push_back(std::move(w));
  });
  return blocks;
}

}  // namespace

std::optional<PrimFunc> fuse_epilogue(const PrimFunc& anchor, const PrimFunc& epilogue, int epilogue_product,
                                      const std::string& name) {
  const Buffer& product = anchor.params.back();
  const Buffer& read_product = epilogue.params.at(epilogue_product);
  // The same array on both sides: the epilogue reads the product in the anchor's shape.
  bool same = product->dtype == read_product->dtype && product->shape.size() == read_product->shape.size();
  for (size_t d = 0; same && d < product->shape.size(); ++d) {
    same = structural_equal(product->shape[d], read_product->shape[d]);
  }
  if (!same) return std::nullopt;
  std::vector<BlockWrites> epilogue_blocks = blocks_of(epilogue.body);
  if (epilogue_blocks.size() != 1) return std::nullopt;
  // The last block writing the product: the epilogue goes under its parallel loop.
  std::string writer;
  for (const BlockWrites& b : blocks_of(anchor.body)) {
    for (const Buffer& w : b.writes) {
      if (w.same_as(product)) writer = b.name;
    }
  }
  if (writer.empty()) return std::nullopt;
  for (const BlockWrites& b : blocks_of(anchor.body)) {
    if (b.name == epilogue_blocks[0].name) return std::nullopt;  // block names must stay unique
  }

  PrimFunc fused;
  fused.name = name;
  fused.params.assign(anchor.params.begin(), anchor.params.end() - 1);
  for (size_t i = 0; i < epilogue.params.size(); ++i) {
    if (static_cast<int>(i) != epilogue_product) fused.params.push_back(epilogue.params[i]);
  }
  Stmt epilogue_body = schedule_detail::replace_buffer(epilogue.body, read_product, product);
  fused.body = allocate(product, seq({anchor.body, epilogue_body}));

  try {
    Schedule s(fused);
    BlockRV consumer = s.get_block(epilogue_blocks[0].name);
    std::vector<LoopRV> loops = s.get_loops(s.get_block(writer));
    if (loops.empty()) return std::nullopt;
    LoopRV at = loops[0];
    for (LoopRV l : loops) {
      if (s.loop(l)->for_kind == ForKind::Parallel) {
        at = l;
        break;
      }
    }
    s.reverse_compute_at(consumer, at);
    ops::vectorize_innermost_spatial(s, consumer);
    return s.func();
  } catch (const ScheduleError&) {
    return std::nullopt;
  }
}

}  // namespace temper::graph
