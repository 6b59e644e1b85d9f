// insert_barriers(): the barriers a kernel needs between threads' accesses to shared
// memory (TVM's ThreadSync for the "shared" scope).
//
// The threads of a block run a kernel's statements in step only at barriers, so a read
// of shared memory written by other threads must wait for the writes, and a write must
// wait for the other threads' reads of what it overwrites. In each sequence, a barrier
// goes before the first statement that reads a shared buffer written since the last
// barrier, or writes one read since; a serial loop whose body both writes and reads a
// shared buffer also ends each iteration with one (the next iteration's writes overwrite
// what this one read).
//
// A barrier is evaluate(call_intrinsic(int32, "thread_barrier", {})). Every thread of the
// block must reach it, so it may not sit in code that only some threads run: under a
// loop bound to a thread axis with an extent below the block's (its iterations are
// guarded), or under a condition that reads a thread index. Such a schedule is a
// UserError naming the loop.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "compiler/ir/ir.h"

namespace temper {

// The intrinsic a kernel synchronises its thread block with, the barrier statement, and
// whether s is one.
inline constexpr const char* kThreadBarrier = "thread_barrier";
Stmt thread_barrier();
bool is_thread_barrier(const Stmt& s);

// kernel: a kernel nest of split_host_device; block: its threadIdx extents.
Stmt insert_barriers(const Stmt& kernel, const std::array<int64_t, 3>& block, const std::string& func_name);

}  // namespace temper
