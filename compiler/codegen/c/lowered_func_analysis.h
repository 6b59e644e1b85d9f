// What both backends (C here, LLVM in codegen/llvm) need to know about a lowered PrimFunc
// before emitting it: that it is in the lowered form, how its arguments bind its shape
// variables, and what an outlined parallel loop captures.
//
// The lowered form: no Block, BlockRealize or Reduce; every buffer access has one index
// (the row-major element offset; a 0-d buffer may have none), parameters keep their
// N-d shapes; the function name is a C identifier. Pure calls name a math function of
// math_function_arity() (compiler/ir/math_functions.h) on float operands; Extern calls take scalar arguments; the one
// Intrinsic is address_of(a buffer load with a scalar index).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/math_functions.h"

namespace temper {

// Throws UserError naming what is not lowered (or a name that is not a C identifier, or
// two functions of one name). The GPU printers also accept the argument-less intrinsics
// they print (thread_barrier).
void check_lowered(const std::vector<PrimFunc>& funcs, const std::set<std::string>& device_intrinsics = {});

// How a function's arguments are checked and bind its shape variables: a dimension whose
// declared extent is a Var seen there for the first time (in parameter order) binds it to
// the argument's extent; every other dimension is an expression the argument must equal.
struct ShapeBinding {
  // binds_var[p][d]: dimension d of parameter p defines the Var that is its extent.
  std::vector<std::vector<bool>> binds_var;
  // Those Vars, in the order they are bound.
  std::vector<Var> shape_vars;
};

// Throws UserError when a shape expression uses a Var no dimension binds, or the body uses
// a Var that is neither bound in it nor a shape variable.
ShapeBinding bind_shape_vars(const PrimFunc& f);

// The values a statement uses but does not define: what an outlined loop body receives.
struct Captures {
  std::vector<Var> vars;        // in order of first use
  std::vector<Buffer> buffers;  // accessed but not allocated inside, in order of first use
};

// Captures of a loop's body; the loop variable itself is defined by the loop.
Captures loop_body_captures(const ForNode* loop);

// Whether an Allocate's buffer lives on the stack (both backends decide alike): a
// constant size, up to 256 KiB for "local" buffers (register tiles, accumulators) and
// 1 KiB for others. The rest comes from temper_alloc.
bool allocate_on_stack(const Buffer& buffer);

// The number of elements of a buffer: the product of its extents.
Expr buffer_elements(const Buffer& buffer);

// The element offset of a lowered access (its one index, or 0 for a 0-d buffer).
Expr flat_index(const std::vector<Expr>& indices);

}  // namespace temper
