// NVRTC, the CUDA runtime compiler: CUDA C source (codegen_cuda.h) to PTX, which the
// driver compiles for the device when it loads it.
//
// The library is loaded at run time with dlopen, never linked, so that Temper starts on
// machines without the CUDA Toolkit. It is looked for at $TEMPER_NVRTC when that is set
// (and only there), otherwise as libnvrtc.so, libnvrtc.so.13, .12, .11 on the loader's
// path and then in /usr/local/cuda/lib64. A library found stays loaded for the process.
//
// Every failure is a UserError: no library ("NVRTC (libnvrtc.so) not found: install the
// CUDA Toolkit or set TEMPER_NVRTC=/path/libnvrtc.so"), an architecture this NVRTC does
// not know (naming its version and the ones it knows), or source that does not compile
// (with NVRTC's log and the source lines it points at).
#pragma once

#include <string>

namespace temper {

// PTX for `arch` ("sm_90", "sm_90a"; "" means sm_80), compiled without fast-math so
// that results match the reference implementations.
std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch);

// "NVRTC 13.0", or "" when NVRTC cannot be loaded.
std::string nvrtc_version();

// Whether NVRTC can be loaded; if not, *why_not (when given) says why and what to do.
bool nvrtc_available(std::string* why_not);

}  // namespace temper
