/* Temper's C runtime API: what generated code (LLVM or C backend) calls, and the one
 * calling convention every compiled function follows. Valid C99 and C++.
 *
 * Calling convention: a compiled PrimFunc `f` is exported as
 *     int32_t f(const TemperTensor* args, int32_t num_args);
 * with one tensor per buffer parameter, in order. It returns 0 on success; on failure it
 * returns nonzero after temper_set_last_error() recorded why (a wrong argument shape,
 * dtype, device, alignment; an allocation that failed). The generated wrapper checks
 * every argument against the PrimFunc's parameters before touching any data.
 *
 * Tensors are DLPack-like views: element type (code, bits, lanes), CPU device, row-major.
 * Generated code accepts only compact tensors (strides NULL or row-major). bool tensors
 * are (TEMPER_DTYPE_UINT, 1 bit) stored one byte per element, as in TVM.
 *
 * Errors are per thread: temper_get_last_error() returns the message of the last failure
 * on the calling thread. temper_parallel_for carries a failing body's message back to
 * the thread that called it.
 */
#ifndef TEMPER_RUNTIME_C_RUNTIME_API_H_
#define TEMPER_RUNTIME_C_RUNTIME_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TemperTensor::code, as DLPack's DLDataTypeCode. */
enum { TEMPER_DTYPE_INT = 0, TEMPER_DTYPE_UINT = 1, TEMPER_DTYPE_FLOAT = 2, TEMPER_DTYPE_HANDLE = 3 };

/* TemperTensor::device_type, as DLPack's DLDeviceType. */
enum { TEMPER_DEVICE_CPU = 1, TEMPER_DEVICE_CUDA = 2, TEMPER_DEVICE_OPENCL = 4 };

typedef struct {
  void* data;
  int32_t ndim;
  const int64_t* shape;
  const int64_t* strides; /* in elements; NULL = compact row-major */
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
  int32_t device_type;
  int32_t device_id;
} TemperTensor;

/* The signature of every compiled function. */
typedef int32_t (*TemperPackedCFunc)(const TemperTensor* args, int32_t num_args);

/* The signature of a parallel loop body: iteration i of n, with the loop's captured values. */
typedef int32_t (*TemperParallelBody)(int64_t i, void* closure);

/* Records msg (copied) as the calling thread's last error. */
void temper_set_last_error(const char* msg);
/* The calling thread's last error message ("" if none); valid until the next failure on this thread. */
const char* temper_get_last_error(void);

/* Runs body(i, closure) for i in [0, n) on the OpenMP thread pool, contiguous chunks per
 * thread. Returns 0, or the first nonzero status a body returned (its error message is
 * then the calling thread's last error). */
int32_t temper_parallel_for(int64_t n, TemperParallelBody body, void* closure);
/* The number of threads temper_parallel_for uses; n <= 0 restores the default (all cores). */
void temper_set_num_threads(int32_t n);
int32_t temper_get_num_threads(void);

/* 64-byte aligned heap memory; NULL (with the last error set) when out of memory. A
 * freed block is kept for the thread's next allocation of its size (block_cache.h). */
void* temper_alloc(int64_t bytes);
void temper_free(void* ptr);

/* Argument checks the generated wrappers call; each returns 0, or -1 with the last
 * error naming the function, the argument's position and name, and what was wrong. */
int32_t temper_check_num_args(const char* func, int32_t num_args, int32_t expected);
/* Checks args[index] is a compact CPU tensor of ndim dimensions and the given scalar type
 * whose data pointer is aligned to `alignment` bytes. */
int32_t temper_check_tensor_header(const char* func, const TemperTensor* args, int32_t index, const char* name,
                                   int32_t ndim, uint8_t code, uint8_t bits, int32_t alignment);
/* Checks args[index].shape equals expected_shape (args[index].ndim entries). */
int32_t temper_check_tensor_shape(const char* func, const TemperTensor* args, int32_t index, const char* name,
                                  const int64_t* expected_shape);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // TEMPER_RUNTIME_C_RUNTIME_API_H_
