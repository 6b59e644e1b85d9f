#include "compiler/lower/split_host_device.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/codegen/c/lowered_func_analysis.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/insert_barriers.h"

namespace temper {
namespace {

// Where a thread tag puts its extent: {0 for blockIdx / 1 for threadIdx, axis}.
std::pair<int, int> launch_slot(const std::string& tag) {
  int axis = tag.back() - 'x';
  TEMPER_CHECK(axis >= 0 && axis < 3, "unexpected thread tag ", tag);
  return {tag.rfind("blockIdx", 0) == 0 ? 0 : 1, axis};
}

// "vthread" loops run their iterations one after the other in each thread.
class VirtualThreadsToSerial : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (op->for_kind == ForKind::ThreadBinding && op->thread_tag == "vthread") {
      return make_for(op->loop_var, op->min, op->extent, ForKind::Serial, body, "", op->annotations);
    }
    return body.same_as(op->body)
               ? self
               : make_for(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, op->annotations);
  }
};

// Shared buffers move to the top of their kernel: OpenCL allows __local declarations at
// kernel scope only, and one declaration serves every copy of a loop body.
class SharedAllocationHoister : public IRMutator {
 public:
  using IRMutator::visit;
  std::vector<Buffer> hoisted;

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    if (op->buffer->scope != "shared") return IRMutator::visit(op, self);
    if (std::none_of(hoisted.begin(), hoisted.end(), [&](const Buffer& b) { return b.same_as(op->buffer); })) {
      hoisted.push_back(op->buffer);
    }
    return mutate(op->body);
  }
};

class Splitter {
 public:
  explicit Splitter(const PrimFunc& f) : f_(f) {}

  DeviceFunction run() {
    DeviceFunction out;
    out.func = f_;
    for (const Buffer& p : f_.params) {
      for (const Expr& d : p->shape) {
        if (!as_const_int(d)) {
          throw UserError(str(f_.name, ": parameter ", p->name, " has the shape variable '", d,
                              "'; GPU targets compile one function per shape: give the workload constant shapes"));
        }
      }
    }
    host(f_.body);
    out.temporaries = temporaries_;
    out.kernels = std::move(kernels_);
    return out;
  }

 private:
  const PrimFunc& f_;
  std::vector<Buffer> temporaries_;
  std::vector<DeviceKernel> kernels_;

  [[noreturn]] void host_work(const std::string& what) const {
    throw UserError(str(f_.name, ": ", what,
                        " would run on the host over device memory; bind the loops around it to blockIdx/threadIdx "
                        "(Schedule::bind) so that it runs in a kernel"));
  }

  void host(const Stmt& s) {
    if (auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& c : seq->seq) host(c);
    } else if (auto* a = s.as<AllocateNode>()) {
      if (a->buffer->scope == "shared") {
        throw UserError(str(f_.name, ": the shared buffer ", a->buffer->name,
                            " is used by more than one kernel; shared memory lives within one thread block"));
      }
      for (const Expr& d : a->buffer->shape) {
        if (!as_const_int(d)) throw UserError(str(f_.name, ": buffer ", a->buffer->name, " has no constant size"));
      }
      temporaries_.push_back(a->buffer);
      host(a->body);
    } else if (auto* loop = s.as<ForNode>()) {
      if (loop->for_kind != ForKind::ThreadBinding || loop->thread_tag == "vthread") {
        host_work(str("loop '", loop->loop_var.name(), "'"));
      }
      kernel(s, loop);
    } else if (auto* store = s.as<BufferStoreNode>()) {
      host_work(str("the store to ", store->buffer->name));
    } else {
      host_work("a statement outside every bound loop");
    }
  }

  void kernel(const Stmt& nest, const ForNode* root) {
    DeviceKernel k;
    k.name = str(f_.name, "_kernel", kernels_.size());
    Captures captures = loop_body_captures(root);
    if (!captures.vars.empty()) {
      throw UserError(str(f_.name, ": kernel ", kernels_.size(), " uses '", captures.vars[0].name(),
                          "', a value computed on the host; GPU kernels take buffers only"));
    }
    k.params = captures.buffers;
    Stmt body = VirtualThreadsToSerial().mutate(nest);
    std::map<std::pair<int, int>, int64_t> extents;
    post_order_visit(body, [&](const Node* n) {
      if (n->kind != NodeKind::For) return;
      auto* loop = static_cast<const ForNode*>(n);
      if (loop->for_kind != ForKind::ThreadBinding) return;
      const int64_t* extent = as_const_int(loop->extent);
      if (!extent) {
        throw UserError(str(f_.name, ": the loop bound to ", loop->thread_tag, " has the extent '", loop->extent,
                            "'; a launch needs constant extents"));
      }
      int64_t& e = extents[launch_slot(loop->thread_tag)];
      e = std::max(e, *extent);
    });
    for (const auto& [slot, extent] : extents) (slot.first == 0 ? k.grid : k.block)[slot.second] = extent;
    body = insert_barriers(body, k.block, f_.name);
    SharedAllocationHoister hoister;
    body = hoister.mutate(body);
    for (size_t i = hoister.hoisted.size(); i-- > 0;) body = allocate(hoister.hoisted[i], body);
    k.body = body;
    kernels_.push_back(std::move(k));
  }
};

}  // namespace

DeviceFunction split_host_device(const PrimFunc& lowered) {
  return Splitter(lowered).run();
}

}  // namespace temper
