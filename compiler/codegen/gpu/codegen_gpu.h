// What the CUDA and OpenCL printers (codegen_cuda.h, codegen_opencl.h) share: the kernels
// of split_host_device() printed as kernel functions of a C dialect, on top of the C
// printer (codegen/c/codegen_c.h). A subclass fills in the dialect: the kernel signature,
// qualifiers, thread indices, the barrier, vector types and the preamble.
//
// A kernel prints as
//   <signature>(<a pointer per global buffer, const when the kernel only reads it>) {
//     <its shared arrays, declared first: OpenCL allows __local arrays only there>
//     <its body>
//   }
// where
//   - a loop bound to a thread axis is its variable set to the thread's index on that
//     axis (`int32_t tx = threadIdx.x;`); its body runs under `if (tx < extent)` only
//     when the loop is shorter than the kernel's launch extent on that axis;
//   - an Allocate of scope "shared" is one of the arrays above, a "local" one an array of
//     each thread (registers or private memory);
//   - the thread_barrier intrinsic is the dialect's barrier of a thread block;
//   - Unrolled loops, and the loops over the lanes of vector values, get `#pragma unroll`;
//   - a vector store at a contiguous index (a ramp of stride 1) whose type has a vector
//     type of that many lanes is one vector store, and the contiguous vector loads its
//     value reads are one vector load each, done before the store; where the dialect's
//     vector accesses must be aligned (CUDA), only accesses proven aligned (from the
//     buffer's alignment and the constant factors of the index) are. Every other vector
//     statement is printed lane by lane.
// A kernel that uses what has no meaning on a GPU is a UserError naming the kernel: an
// extern call, address_of, a parallel loop, an Allocate in "global" memory or of a size
// that is not a constant, a symbolic shape, a thread axis other than blockIdx/threadIdx
// .x/.y/.z, float16 (not supported yet).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/c/codegen_c.h"
#include "compiler/lower/insert_barriers.h"
#include "compiler/lower/split_host_device.h"

namespace temper {

class CodeGenGPU : public CodeGenC {
 protected:
  // Every kernel of fns, in order, as one translation unit.
  std::string emit_kernels(const std::vector<DeviceFunction>& fns);

  // ---- the dialect
  // "CUDA", "OpenCL": how messages name the backend.
  virtual std::string dialect_name() const = 0;
  // Identifiers of the dialect (keywords, built-in types and functions) no local may take.
  virtual std::vector<std::string> reserved_words() const = 0;
  // The kernel's declaration up to its body: qualifiers, launch bounds, name, parameters.
  virtual std::string kernel_signature(const DeviceKernel& kernel, const std::vector<std::string>& params) const = 0;
  virtual std::string kernel_param(const std::string& element_type, const std::string& name, bool read_only) const = 0;
  // The index of the running thread on an axis: "threadIdx.x" -> "get_local_id(0)" in OpenCL.
  virtual std::string thread_index(const std::string& thread_tag) const = 0;
  virtual std::string shared_qualifier() const = 0;
  virtual std::string barrier() const = 0;
  // The vector type of `lanes` elements of type t, or "" when there is none.
  virtual std::string vector_type(DataType t, int lanes) const = 0;
  virtual bool vector_access_needs_alignment() const = 0;
  // A vector of `type` read from or written to `address`, the first element's address.
  virtual std::string vector_load(const std::string& type, const std::string& address, int lanes) const = 0;
  virtual std::string vector_store(const std::string& type, const std::string& address, int lanes,
                                   const std::string& value) const = 0;
  // A vector value of its lanes' values; the suffix that selects one lane of a vector.
  virtual std::string vector_value(const std::string& type, const std::vector<std::string>& lanes) const = 0;
  virtual std::string vector_lane(int lane) const = 0;

  // ---- CodeGenC's hooks, the same for every GPU dialect
  void print_thread_binding_loop(const ForNode* op) override;
  void print_unrolled_loop(const ForNode* op) override;
  void print_allocate(const AllocateNode* op) override;
  void print_vector_store(const BufferStoreNode* op) override;
  void print_lane_loop(int lanes, const std::string& statement) override;
  std::string print_intrinsic(const CallNode* op) override;
  std::string print_buffer_load(const BufferLoadNode* op) override;

 private:
  void check_kernel(const DeviceKernel& kernel) const;
  void print_kernel(const DeviceKernel& kernel);
  int64_t launch_extent(const std::string& thread_tag) const;
  // The address of b's element at `index`, as C text.
  std::string element_address(const Buffer& b, const Expr& index);
  // Whether a vector access of `lanes` elements of b at `first` may be a vector access.
  bool allows_vector_access(const Buffer& b, const Expr& first, int lanes) const;

  // Prints vector expressions at one constant lane while it lives.
  class AtLane {
   public:
    AtLane(CodeGenGPU& printer, int lane);
    ~AtLane();
    AtLane(const AtLane&) = delete;
    AtLane& operator=(const AtLane&) = delete;

   private:
    CodeGenGPU& printer_;
    std::string outer_lane_;
    int outer_lane_index_;
  };

  const DeviceKernel* kernel_ = nullptr;
  // Known power-of-two factors of the integer let variables of the kernel (alignment proofs).
  std::map<const VarNode*, int64_t> let_factors_;
  // Vector loads read before the statement being printed, by the name holding the vector.
  std::map<const BufferLoadNode*, std::string> vector_loads_;
  // The constant lane being printed (AtLane); -1 when there is none.
  int lane_index_ = -1;
};

}  // namespace temper
