// One candidate compiled in a process of its own: the builder's threads fork a child per
// candidate, which lowers and compiles it (compile below) and sends its BuildArtifact back
// over a pipe. Whatever the compile does to its process -- a crash LLVM's recovery cannot
// catch, heap corruption, exit(), a loop without end, memory without end -- costs that
// candidate only: the child is killed at the time-out (its CPU time is capped too, should
// this process die first) and a child that dies is the candidate's CompileError.
//
// The child is a fork of a multi-threaded process that is not exec'd (the candidate's IR
// lives in this address space): it only lowers, compiles and writes, and this process's
// compile threads touch no compiler state of their own (they fork and wait), so no lock
// the child needs is held by a thread that does not exist in it.
#pragma once

#include <shared_mutex>
#include <string>

#include "measure/measure_types.h"

namespace temper::measure {

// Lowers and compiles input into path (a shared library, or a DeviceProgram for a GPU
// target) in this process; a failure is the artifact's error, never an exception.
BuildArtifact compile(const MeasureInput& input, const std::string& path);

// The same in a forked child, waited for at most timeout_s.
BuildArtifact compile_in_child_process(const MeasureInput& input, const std::string& path, double timeout_s);

// Held shared by the builder's threads while they allocate, and exclusive around fork: a
// child must not start with an allocator lock taken by a thread that does not exist in it
// (glibc's malloc guards itself at fork; the allocator of GCC 12's AddressSanitizer does
// not, and its children hung).
std::shared_mutex& fork_mutex();

}  // namespace temper::measure
