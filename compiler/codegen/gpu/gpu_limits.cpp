#include "compiler/codegen/gpu/gpu_limits.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "compiler/ir/functor.h"
#include "compiler/runtime/gpu/gpu_device.h"

namespace temper {
namespace {

GpuLimits kind_defaults(Target::Kind kind) {
  GpuLimits l;
  if (kind == Target::Kind::CUDA) {
    l.max_threads_per_block = 1024;
    l.max_block_dims = {1024, 1024, 64};
    l.max_grid_dims = {2147483647, 65535, 65535};
    l.max_shared_memory_per_block = 48 * 1024;
    l.max_local_bytes_per_thread = 255 * 4;
    l.vector_lanes = {1, 2, 4};
    l.source = "the defaults of cuda";
  } else {
    l.max_threads_per_block = 256;
    l.max_block_dims = {256, 256, 256};
    l.max_grid_dims = {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31};
    l.max_shared_memory_per_block = 32 * 1024;
    l.max_local_bytes_per_thread = 16 * 1024;
    l.vector_lanes = {1, 2, 3, 4, 8, 16};
    l.source = "the defaults of opencl";
  }
  return l;
}

// The device's own limits, asked once per process and device; nullopt without one.
std::optional<GpuDeviceInfo> queried_device(const Target& target) {
  static std::mutex mutex;
  static std::map<std::pair<Target::Kind, int>, std::optional<GpuDeviceInfo>> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(target.kind, target.device);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::optional<GpuDeviceInfo> info;
  try {
    info = open_gpu_device(target)->info();
  } catch (const UserError&) {  // no such device here: the defaults stand
  }
  cache[key] = info;
  return info;
}

int64_t constant_bytes(const Buffer& b) {
  int64_t n = b->dtype.bytes();
  for (const Expr& d : b->shape) {
    const int64_t* c = as_const_int(d);
    if (!c) return -1;
    n *= *c;
  }
  return n;
}

const char* kAxes[] = {"x", "y", "z"};

}  // namespace

GpuLimits gpu_limits(const Target& target) {
  if (!target.is_gpu()) throw UserError(str("target '", target.to_string(), "' is not a GPU target"));
  GpuLimits l = kind_defaults(target.kind);
  if (std::optional<GpuDeviceInfo> info = queried_device(target)) {
    if (info->max_threads_per_block > 0) l.max_threads_per_block = info->max_threads_per_block;
    for (int a = 0; a < 3; ++a) {
      if (info->max_block_dims[a] > 0) l.max_block_dims[a] = info->max_block_dims[a];
    }
    if (info->max_shared_memory_per_block > 0) l.max_shared_memory_per_block = info->max_shared_memory_per_block;
    l.source = "device '" + info->name + "'";
  }
  if (target.max_threads_per_block > 0) {
    l.max_threads_per_block = target.max_threads_per_block;
    l.source = "target '" + target.to_string() + "'";
  }
  if (target.max_shared_memory_per_block > 0) {
    l.max_shared_memory_per_block = target.max_shared_memory_per_block;
    l.source = "target '" + target.to_string() + "'";
  }
  return l;
}

void check_gpu_limits(const DeviceFunction& function, const GpuLimits& limits) {
  for (const DeviceKernel& k : function.kernels) {
    auto fail = [&](const std::string& what) {
      throw GpuLimitError(str("kernel ", k.name, ": ", what, " (limits of ", limits.source, ")"));
    };
    if (k.threads_per_block() > limits.max_threads_per_block) {
      fail(str(k.threads_per_block(), " threads per block (", k.block[0], " x ", k.block[1], " x ", k.block[2],
               ") exceed the limit of ", limits.max_threads_per_block));
    }
    for (int a = 0; a < 3; ++a) {
      if (k.block[a] > limits.max_block_dims[a]) {
        fail(str("threadIdx.", kAxes[a], " extent ", k.block[a], " exceeds the limit of ", limits.max_block_dims[a]));
      }
      if (k.grid[a] > limits.max_grid_dims[a]) {
        fail(str("blockIdx.", kAxes[a], " extent ", k.grid[a], " exceeds the limit of ", limits.max_grid_dims[a]));
      }
    }
    int64_t shared = 0, local = 0;
    int bad_lanes = 0;
    post_order_visit(k.body, [&](const Node* n) {
      if (n->kind == NodeKind::Allocate) {
        const Buffer& b = static_cast<const AllocateNode*>(n)->buffer;
        int64_t bytes = constant_bytes(b);
        if (bytes < 0) fail(str("buffer ", b->name, " has no constant size"));
        (b->scope == "shared" ? shared : local) += bytes;
      } else if (n->kind <= NodeKind::Reduce) {  // an expression (the kinds list expressions first)
        int lanes = static_cast<const ExprNode*>(n)->dtype.lanes();
        if (std::find(limits.vector_lanes.begin(), limits.vector_lanes.end(), lanes) == limits.vector_lanes.end()) {
          bad_lanes = lanes;
        }
      }
    });
    if (shared > limits.max_shared_memory_per_block) {
      fail(str(shared, " bytes of shared memory exceed the limit of ", limits.max_shared_memory_per_block));
    }
    if (local > limits.max_local_bytes_per_thread) {
      fail(str(local, " bytes of registers and private arrays per thread exceed the limit of ",
               limits.max_local_bytes_per_thread));
    }
    if (bad_lanes) {
      std::string widths;
      for (int w : limits.vector_lanes) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
      fail(str("a vector of ", bad_lanes, " lanes; the kernel language has ", widths));
    }
  }
}

}  // namespace temper
