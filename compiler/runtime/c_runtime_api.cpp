// The C runtime API (c_runtime_api.h): per-thread errors, the parallel loop (on
// thread_pool.h's pool), aligned allocation (block_cache.h) and the argument checks of generated wrappers.
#include "compiler/runtime/c_runtime_api.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "compiler/ir/error.h"
#include "compiler/ir/type.h"
#include "compiler/runtime/block_cache.h"
#include "compiler/runtime/thread_pool.h"

namespace {

thread_local std::string last_error;

// 0: the default, one thread per core.
std::atomic<int32_t> requested_num_threads{0};

std::string dtype_name(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (code > TEMPER_DTYPE_HANDLE) return temper::str("(type code ", int{code}, ", ", int{bits}, " bits)");
  return temper::DataType(static_cast<temper::DataType::Code>(code), bits, lanes).to_string();
}

std::string shape_string(const int64_t* shape, int32_t ndim) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + "]";
}

int32_t fail(const std::string& msg) {
  last_error = msg;
  return -1;
}

std::string argument_prefix(const char* func, int32_t index, const char* name) {
  return temper::str(func, ": argument ", index, " (", name, "): ");
}

}  // namespace

extern "C" {

void temper_set_last_error(const char* msg) {
  last_error = msg ? msg : "";
}

const char* temper_get_last_error(void) {
  return last_error.c_str();
}

int32_t temper_parallel_for(int64_t n, TemperParallelBody body, void* closure) {
  // The first failing iteration's message, carried from the thread that ran it.
  std::mutex message_mutex;
  std::string first_message;
  int32_t status = temper::pool_parallel_for(n, temper_get_num_threads(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (int32_t s = body(i, closure); s != 0) {
        std::lock_guard<std::mutex> lock(message_mutex);
        if (first_message.empty()) first_message = last_error;
        return s;
      }
    }
    return int32_t{0};
  });
  if (status != 0) last_error = first_message;
  return status;
}

void temper_set_num_threads(int32_t n) {
  requested_num_threads = n > 0 ? n : 0;
}

int32_t temper_get_num_threads(void) {
  int32_t n = requested_num_threads;
  return n > 0 ? n : omp_get_num_procs();
}

void* temper_alloc(int64_t bytes) {
  if (bytes < 0) {
    fail(temper::str("temper_alloc: negative size ", bytes));
    return nullptr;
  }
  void* p = temper::runtime::cached_alloc(bytes);
  if (!p) fail(temper::str("out of memory: cannot allocate ", bytes, " bytes"));
  return p;
}

void temper_free(void* ptr) {
  temper::runtime::cached_free(ptr);
}

int32_t temper_check_num_args(const char* func, int32_t num_args, int32_t expected) {
  if (num_args == expected) return 0;
  return fail(temper::str(func, ": expected ", expected, " arguments, got ", num_args));
}

int32_t temper_check_tensor_header(const char* func, const TemperTensor* args, int32_t index, const char* name,
                                   int32_t ndim, uint8_t code, uint8_t bits, int32_t alignment) {
  std::string prefix = argument_prefix(func, index, name);
  if (!args) return fail(temper::str(func, ": the argument array is NULL"));
  const TemperTensor& t = args[index];
  if (t.device_type != TEMPER_DEVICE_CPU) {
    return fail(temper::str(prefix, "expected a CPU tensor, got device type ", t.device_type));
  }
  if (t.ndim != ndim) return fail(temper::str(prefix, "expected ", ndim, " dimensions, got ", t.ndim));
  if (t.code != code || t.bits != bits || t.lanes != 1) {
    return fail(temper::str(prefix, "expected dtype ", dtype_name(code, bits, 1), ", got ",
                            dtype_name(t.code, t.bits, t.lanes)));
  }
  if (ndim > 0 && !t.shape) return fail(temper::str(prefix, "the shape array is NULL"));
  int64_t elements = 1;
  for (int32_t d = 0; d < ndim; ++d) elements *= t.shape[d];
  if (t.strides) {
    int64_t expected_stride = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      // A dimension of extent 1 is never stepped over, so its stride does not matter.
      if (t.shape[d] != 1 && t.strides[d] != expected_stride) {
        return fail(temper::str(prefix, "expected a compact row-major tensor, got strides ",
                                shape_string(t.strides, ndim), " for shape ", shape_string(t.shape, ndim)));
      }
      expected_stride *= t.shape[d];
    }
  }
  if (!t.data && elements != 0) return fail(temper::str(prefix, "the data pointer is NULL"));
  if (reinterpret_cast<uintptr_t>(t.data) % static_cast<uintptr_t>(alignment) != 0) {
    return fail(temper::str(prefix, "the data pointer ", t.data, " is not ", alignment, "-byte aligned"));
  }
  return 0;
}

int32_t temper_check_tensor_shape(const char* func, const TemperTensor* args, int32_t index, const char* name,
                                  const int64_t* expected_shape) {
  const TemperTensor& t = args[index];
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] != expected_shape[d]) {
      return fail(temper::str(argument_prefix(func, index, name), "expected shape ",
                              shape_string(expected_shape, t.ndim), ", got ", shape_string(t.shape, t.ndim)));
    }
  }
  return 0;
}

}  // extern "C"
