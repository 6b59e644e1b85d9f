// float32 exp, log, tanh, erf, sigmoid and pow as straight-line LLVM IR for a scalar or a
// vector of any width: a vectorized loop computes them in its vector registers instead of
// calling libm once per lane. Range reduction and polynomials of our own
// (scripts/fit_vector_math.py; pow works in double, with Taylor series); inf, nan, -0 and
// denormals follow libm. exp (and tanh, erf, sigmoid through it) branches per vector: where
// every lane is within |x| <= 87 it scales by 2^n in one multiply; a vector with any lane
// beyond takes the full range's path. Max errors over every float32 (pow: over a dense grid of bases and
// exponents), measured by tests/correctness/test_vector_math.cpp against double-precision
// libm: exp 1.5 ulp, log 1 ulp, tanh 1.5 ulp, erf 1.5 ulp, sigmoid 2.5 ulp, pow 1 ulp (1.02,
// 0.87, 1.31, 1.13, 2.33 and 0.50 measured).
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace temper {

llvm::Value* vector_exp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* vector_log(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* vector_tanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* vector_erf(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* vector_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* vector_pow(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);

}  // namespace temper
