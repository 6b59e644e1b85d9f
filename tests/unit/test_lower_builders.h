// Builders for the lowering tests: blocks written compactly, and a check that two
// functions compute the same outputs (by the test interpreter).
#pragma once

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "unit/test_lower_interpreter.h"

namespace temper::test {

inline IterVar spatial(const Var& v, int64_t extent) {
  return {v, {make_const(v.dtype(), int64_t{0}), make_const(v.dtype(), extent)}, IterKind::Spatial};
}
inline IterVar reduce(const Var& v, int64_t extent) {
  return {v, {make_const(v.dtype(), int64_t{0}), make_const(v.dtype(), extent)}, IterKind::Reduce};
}

struct BlockSpec {
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<Expr> bindings;
  Stmt body;
  Stmt init = {};       // a reduction's init
  Expr predicate = {};  // true when undefined
  std::vector<Buffer> alloc_buffers = {};
};

inline Stmt block(const BlockSpec& s) {
  auto b = std::make_shared<BlockNode>();
  b->name = s.name;
  b->iter_vars = s.iter_vars;
  b->body = s.body;
  b->init = s.init;
  b->alloc_buffers = s.alloc_buffers;
  return block_realize(s.bindings, s.predicate.defined() ? s.predicate : make_bool(true), b);
}

inline int64_t element_count(const Buffer& b) {
  int64_t n = 1;
  for (const Expr& d : b->shape) n *= *as_const_int(d);
  return n;
}

// Runs both functions on the same inputs (all parameters filled with test data) and
// expects bit-identical parameter contents afterwards, or within relative_tolerance where
// the schedule reassociates a reduction (rfactor adds in another order).
inline void expect_same_results(const PrimFunc& before, const PrimFunc& after, double relative_tolerance = 0) {
  ASSERT_EQ(before.params.size(), after.params.size());
  std::vector<std::vector<double>> a, b;
  for (size_t i = 0; i < before.params.size(); ++i) {
    a.push_back(test_data(element_count(before.params[i]), static_cast<int>(i)));
    b.push_back(a.back());
  }
  std::vector<std::vector<double>*> pa, pb;
  for (size_t i = 0; i < a.size(); ++i) {
    pa.push_back(&a[i]);
    pb.push_back(&b[i]);
  }
  Interpreter().run(before, pa);
  ASSERT_NO_THROW(Interpreter().run(after, pb)) << after;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < a[i].size(); ++k) {
      ASSERT_FALSE(std::isnan(b[i][k])) << before.params[i]->name << "[" << k << "] is NaN after\n" << after;
      if (relative_tolerance == 0) {
        ASSERT_EQ(a[i][k], b[i][k]) << before.params[i]->name << "[" << k << "] differs after\n" << after;
      } else {
        ASSERT_LE(std::fabs(a[i][k] - b[i][k]), relative_tolerance * std::max(1.0, std::fabs(a[i][k])))
            << before.params[i]->name << "[" << k << "] differs after\n" << after;
      }
    }
  }
}

}  // namespace temper::test
