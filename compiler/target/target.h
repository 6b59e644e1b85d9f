// What code is compiled for, parsed from TVM-style target strings:
//
//   "llvm"                                         LLVM, a generic CPU of the host's architecture
//   "llvm -mcpu=native"                            LLVM, the host's CPU name and features
//   "llvm -mcpu=skylake-avx512 -mattr=+avx512f,+fma"
//   "c"                                            C source compiled by the system compiler
//   "llvm -mcpu=native -num-cores=2"               run on 2 threads
//   "cuda -arch=sm_90"                             CUDA C through NVRTC, for compute capability 9.0
//   "opencl"                                       OpenCL C on the first OpenCL device (PoCL on a CPU)
//   "opencl -device=1 -max_threads_per_block=256"  another device; a limit given instead of queried
//
// "native" is kept as written; the backends resolve it (codegen/llvm/host_cpu.h for LLVM,
// -march=native for C), so a Target prints back as it was given and keys a tuning log
// the same way on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace temper {

struct Target {
  enum class Kind { LLVM, C, CUDA, OpenCL };

  Kind kind = Kind::LLVM;
  // CPU to tune for: "" (generic), "native", or an LLVM CPU name such as "skylake-avx512".
  std::string mcpu;
  // CPU features added (+avx512f) or removed (-fma) on top of mcpu's.
  std::vector<std::string> mattrs;
  // Threads to run generated code on (whoever runs it passes this to
  // temper_set_num_threads); 0 means one per core of the host.
  int num_cores = 0;

  // GPU targets (cuda, opencl).
  // The CUDA architecture NVRTC compiles for, "sm_<major><minor>"; "" means sm_80.
  std::string arch;
  // Which device of the platform runs the code (OpenCL: index over all platforms' devices;
  // CUDA: the device ordinal).
  int device = 0;
  // Limits a schedule must respect; 0 means the device's queried limit, or the kind's
  // default where no device is present (codegen/gpu/gpu_limits.h).
  int max_threads_per_block = 0;
  int64_t max_shared_memory_per_block = 0;

  bool is_gpu() const { return kind == Kind::CUDA || kind == Kind::OpenCL; }

  // Throws UserError naming an unknown kind or option, or a malformed value.
  static Target parse(const std::string& text);
  // The canonical string: kind, then the options that are set, in a fixed order.
  // parse(to_string()) == *this.
  std::string to_string() const;

  // The widest SIMD register the target's code may use, in bits (128, 256 or 512): what
  // schedules size their vector loops and register tiles by. "native" (and the C target,
  // which builds with -march=native) asks the host CPU.
  int vector_bits() const;

  bool operator==(const Target&) const = default;
};

const char* target_kind_name(Target::Kind kind);

// Whether arch names a CUDA architecture as -arch takes it: sm_<digits>, optionally ending in 'a'.
bool is_cuda_arch(const std::string& arch);

}  // namespace temper
