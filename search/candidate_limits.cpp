#include "search/candidate_limits.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <set>
#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/lower/split_host_device.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::search {
namespace {

// Walks the loop nests keeping the loops around each block.
class RegisterTileFinder : public IRVisitor {
 public:
  using IRVisitor::visit;
  RegisterTile largest;

 protected:
  void visit(const ForNode* op) override {
    loops_.push_back(op);
    IRVisitor::visit(op);
    loops_.pop_back();
  }
  void visit(const BlockRealizeNode* op) override {
    auto* block = static_cast<const BlockNode*>(op->block.get());
    std::set<const VarNode*> reduce_vars;
    for (size_t k = 0; k < block->iter_vars.size() && k < op->iter_values.size(); ++k) {
      if (block->iter_vars[k].kind != IterKind::Reduce) continue;
      post_order_visit(op->iter_values[k], [&](const Node* n) {
        if (n->kind == NodeKind::Var) reduce_vars.insert(static_cast<const VarNode*>(n));
      });
    }
    if (!reduce_vars.empty()) {
      RegisterTile tile;
      for (auto it = loops_.rbegin(); it != loops_.rend() && !reduce_vars.count((*it)->loop_var.get()); ++it) {
        const int64_t* extent = as_const_int((*it)->extent);
        tile.elements *= extent ? *extent : 1;
        if (it == loops_.rbegin()) tile.innermost = extent ? *extent : 1;
      }
      if (tile.elements > largest.elements) largest = tile;
    }
    IRVisitor::visit(op);
  }

 private:
  std::vector<const ForNode*> loops_;
};

// Finds the largest buffer allocated under a parallel loop (lowering keeps a small one
// on the stack, "local", a large one on the heap: both are the thread's).
class PerThreadCopyFinder : public IRVisitor {
 public:
  using IRVisitor::visit;
  int64_t largest = 0;

 protected:
  void visit(const ForNode* op) override {
    bool parallel = op->for_kind == ForKind::Parallel;
    parallel_depth_ += parallel;
    IRVisitor::visit(op);
    parallel_depth_ -= parallel;
  }
  void visit(const AllocateNode* op) override {
    if (parallel_depth_ > 0) {
      int64_t bytes = op->buffer->dtype.bytes();
      for (const Expr& e : op->buffer->shape) {
        const int64_t* extent = as_const_int(e);
        bytes *= extent ? *extent : 1;
      }
      largest = std::max(largest, bytes);
    }
    IRVisitor::visit(op);
  }

 private:
  int parallel_depth_ = 0;
};

// This machine's L2 cache per core in bytes (sysfs), 0 when it cannot be read.
int64_t host_l2_bytes() {
  static const int64_t bytes = [] {
    for (int index = 0; index < 8; ++index) {
      std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
      std::ifstream level(dir + "level"), size(dir + "size");
      int l = 0;
      std::string text;
      if (!(level >> l) || !(size >> text)) break;
      if (l != 2 || text.empty()) continue;
      int64_t value = std::atoll(text.c_str());
      char unit = text.back();
      return unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : value;
    }
    return int64_t{0};
  }();
  return bytes;
}

}  // namespace

CandidateLimits candidate_limits(const Target& target) {
  CandidateLimits limits;
  if (target.is_gpu()) {
    limits.gpu = gpu_limits(target);
  } else {
    limits.vector_lanes = schedule_space::vector_lanes(target);
    limits.max_register_tile = int64_t{schedule_space::vector_registers(target)} * limits.vector_lanes;
    limits.max_copy_bytes = host_l2_bytes() / 2;
  }
  return limits;
}

RegisterTile largest_register_tile(const PrimFunc& scheduled) {
  RegisterTileFinder finder;
  finder.visit(scheduled.body);
  return finder.largest;
}

bool fits_registers(const PrimFunc& scheduled, const CandidateLimits& limits) {
  return limits.max_register_tile <= 0 || largest_register_tile(scheduled).elements <= limits.max_register_tile;
}

bool fills_registers(const PrimFunc& scheduled, const CandidateLimits& limits) {
  if (limits.max_register_tile <= 0 || limits.vector_lanes <= 0) return true;
  RegisterTile tile = largest_register_tile(scheduled);
  return tile.elements * 4 >= limits.max_register_tile && tile.innermost % limits.vector_lanes == 0;
}

int64_t largest_per_thread_copy(const PrimFunc& lowered) {
  PerThreadCopyFinder finder;
  finder.visit(lowered.body);
  return finder.largest;
}

bool fits_device(const PrimFunc& lowered, const CandidateLimits& limits) {
  if (!limits.gpu) return limits.max_copy_bytes <= 0 || largest_per_thread_copy(lowered) <= limits.max_copy_bytes;
  try {
    check_gpu_limits(split_host_device(lowered), *limits.gpu);
  } catch (const UserError&) {
    return false;  // GpuLimitError, or a program split_host_device refuses
  }
  return true;
}

}  // namespace temper::search
