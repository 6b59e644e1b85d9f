// split_host_device(): a lowered PrimFunc for a GPU target becomes the kernels a host
// launches, in order (TVM's SplitHostDevice).
//
// Expects lower()'s output for a GPU schedule: the body is Allocates of "global"
// temporaries, LetStmts, and a sequence of kernel nests; a kernel nest is a loop bound
// to a thread axis (blockIdx.x/y/z, threadIdx.x/y/z) with everything it runs inside it.
// Shapes are constants (a GPU build is for one shape).
//
// Guarantees: each kernel's body is the nest as it was, its launch extents are the
// largest extent bound to each axis in it ("vthread" loops have become serial loops), and
// its parameters are the global buffers it uses, in order of first use. Work outside a
// bound loop (which would run on the host, on device memory), a shape variable, or a
// thread extent that is not a constant is a UserError naming the loop or buffer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper {

struct DeviceKernel {
  std::string name;                       // <function>_kernel<i>
  std::vector<Buffer> params;             // global buffers (function parameters or temporaries), by first use
  Stmt body;                              // the kernel nest, thread-bound loops included
  std::array<int64_t, 3> grid{1, 1, 1};   // blockIdx.x, .y, .z extents
  std::array<int64_t, 3> block{1, 1, 1};  // threadIdx.x, .y, .z extents
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

struct DeviceFunction {
  PrimFunc func;                      // the lowered function: its parameters are what a caller passes
  std::vector<Buffer> temporaries;    // global buffers the host allocates on the device for the call
  std::vector<DeviceKernel> kernels;  // launched in this order, one after the other
};

DeviceFunction split_host_device(const PrimFunc& lowered);

}  // namespace temper
