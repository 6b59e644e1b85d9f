// Prints IR as text that reads like the program:
//
//   func matmul(A: float32[64, 64], B: float32[64, 64], C: float32[64, 64]) {
//     for i in range(0, 64) parallel {
//       for j in range(0, 64) {
//         ...
//
// Distinct variables that share a name are told apart by a suffix (i, i_1), so the
// text identifies every variable. The output is deterministic: tests compare it with
// expected text.
#pragma once

#include <ostream>
#include <string>

#include "compiler/ir/ir.h"

namespace temper {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Buffer& b);

}  // namespace temper
