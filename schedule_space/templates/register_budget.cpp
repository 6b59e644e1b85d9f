#include "schedule_space/templates/register_budget.h"

#include <algorithm>

#include "compiler/ir/error.h"

namespace temper::schedule_space {

int vector_lanes(const Target& target) {
  return target.vector_bits() / 32;
}

int vector_registers(const Target& target) {
  return target.vector_bits() == 512 ? 32 : 16;
}

int64_t registers_used(int64_t broadcast_rows, int64_t vector_columns, int lanes) {
  int64_t vectors = (vector_columns + lanes - 1) / lanes;
  return broadcast_rows * vectors + vectors + 1;
}

void add_register_tile_constraint(ConfigSpace& space, const std::string& rows_knob, const std::string& blocks_knob,
                                  int64_t block, const Target& target) {
  int lanes = vector_lanes(target), registers = vector_registers(target);
  space.add_constraint(str("the tile's accumulators, one step's weight vectors and a broadcast fit the ", registers,
                           " vector registers"),
                       [=](const Config& c) {
                         return registers_used(c.knob_int(rows_knob), c.knob_int(blocks_knob) * block, lanes) <=
                                registers;
                       });
}

std::vector<int64_t> divisors_up_to(int64_t extent, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(extent, limit); ++d) {
    if (extent % d == 0) out.push_back(d);
  }
  return out;
}

int64_t largest_divisor_up_to(int64_t extent, int64_t limit) {
  std::vector<int64_t> divisors = divisors_up_to(extent, limit);
  return divisors.empty() ? 1 : divisors.back();
}

int64_t largest_fitting_rows(int64_t extent, int64_t limit, int64_t vector_columns, const Target& target) {
  int64_t rows = 1;
  for (int64_t d : divisors_up_to(extent, limit)) {
    if (registers_used(d, vector_columns, vector_lanes(target)) <= vector_registers(target)) rows = d;
  }
  return rows;
}

std::vector<nlohmann::json> divisor_knob_values(int64_t extent, int64_t limit) {
  std::vector<int64_t> divisors = divisors_up_to(extent, limit);
  return {divisors.begin(), divisors.end()};
}

}  // namespace temper::schedule_space
