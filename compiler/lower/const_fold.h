// Folding operations on constants with the IR's semantics.
//
// Each function returns the constant result, or an undefined Expr when the operation
// cannot be folded exactly: division by zero, signed overflow of an index type
// (int32/int64, whose overflow the program does not define), a float-to-int
// conversion out of range, float16 arithmetic (no exact host type), NaN in min/max.
// Narrower signed and all unsigned integers wrap around; Div/Mod truncate toward zero
// and FloorDiv/FloorMod round toward negative infinity; float32 results are rounded
// to float32. A cast to bool is `value != 0`.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

// a and b scalar IntImm/FloatImm of one type; kind a binary node kind.
Expr fold_binary(NodeKind kind, const Expr& a, const Expr& b);
Expr fold_not(const Expr& a);
Expr fold_cast(DataType t, const Expr& v);

}  // namespace temper
