// One candidate compiled in a process of its own: for a PrimFunc that no compile worker
// can rebuild (compile_pool.h: one made by hand, without a recipe), the builder's threads
// fork a child, which lowers and compiles it and sends its BuildArtifact back over a pipe. Whatever the compile does to its process -- a crash LLVM's recovery cannot
// catch, heap corruption, exit(), a loop without end -- costs that candidate only: the
// child is killed at the time-out (its CPU time is capped too, should this process be
// stopped) and a child that dies is the candidate's CompileError.
//
// The child is a fork of a multi-threaded process that is not exec'd (the candidate's IR
// lives in this address space): it only lowers, compiles and writes, and this process's
// compile threads touch no compiler state of their own (they fork and wait), so no lock
// the child needs is held by a thread that does not exist in it.
#pragma once

#include <string>

#include "measure/measure_types.h"

namespace temper::measure {

// Lowers and compiles input into path (a shared library, or a DeviceProgram for a GPU
// target) in a forked child, waited for at most timeout_s; a failure is the artifact's
// error, never an exception. The caller's threads must not start or end while another
// calls this (Builder::build starts them all first and ends them together): a thread's
// start and end take allocator locks that the fork would copy held.
BuildArtifact compile_in_child_process(const MeasureInput& input, const std::string& path, double timeout_s);

// The same in this process (a compile worker's, or the child's): what a crash does here,
// it does to this process.
BuildArtifact compile_in_this_process(const MeasureInput& input, const std::string& path);

// An artifact naming input's functions, before anything is known of its compile.
BuildArtifact named_artifact(const MeasureInput& input);

}  // namespace temper::measure
