// The memory geometry of one buffer access, for the cost-model features: how many
// elements and cache lines an index touches as its enclosing loops run.
//
// An access is described by its dimensions, outermost first: one per enclosing loop
// (its extent and the loop variable's coefficient in the index) and, last, the vector
// lanes of a Ramp index (lanes and the Ramp stride). A dimension the index does not
// depend on has varies = false; one it depends on only non-linearly (x // 8) has
// varies = true and coeff = 0 (its stride is unknown, so it is treated as scattered).
// Internal to cost_model/; features.h documents what the numbers mean.
#pragma once

#include <cstdint>
#include <span>

namespace temper::cost_model {

struct AccessDim {
  int64_t extent = 1;
  int64_t coeff = 0;
  bool varies = false;
};

struct Footprint {
  double elements = 0;
  double lines = 0;
};

// The distinct elements and cache lines of dims (each loop running over its whole
// extent), at most buffer_elements when that is positive.
Footprint unique_footprint(std::span<const AccessDim> dims, double element_bytes, double buffer_elements);

// The cache lines entered while the loops run in program order (a line revisited right
// after counts once; a run repeated by an outer loop counts again).
double lines_touched(std::span<const AccessDim> dims, double element_bytes);

}  // namespace temper::cost_model
