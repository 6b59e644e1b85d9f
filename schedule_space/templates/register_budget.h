// The vector-register budget and tile-size helpers the CPU templates share (gemm, conv2d
// and the window templates). Each template keeps a register tile of rows x columns,
// vectorized over its columns: its innermost step holds rows x ceil(columns / lanes)
// accumulators, the ceil(columns / lanes) vectors of one operand and one broadcast of the
// other, and a config is valid when that fits the target's vector registers. Tile sizes
// are divisors of the loop they cut, so that no tail is left.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/target/target.h"
#include "schedule_space/config_space.h"

namespace temper::schedule_space {

// Lanes of 32-bit elements (float32 and int32 alike) in one vector register.
int vector_lanes(const Target& target);

// The target's vector registers: 32 with AVX-512, 16 below it.
int vector_registers(const Target& target);

// Vector registers the innermost step of a tile of broadcast_rows x vector_columns keeps
// live: the accumulators, the vectors of one operand and one broadcast of the other.
int64_t registers_used(int64_t broadcast_rows, int64_t vector_columns, int lanes);

// The constraint of a blocked conv's register tile: `rows_knob` broadcast rows by
// `blocks_knob` channel blocks of `block` lanes each fit the target's vector registers.
void add_register_tile_constraint(ConfigSpace& space, const std::string& rows_knob, const std::string& blocks_knob,
                                  int64_t block, const Target& target);

// The divisors of extent from 1 to min(extent, limit), ascending.
std::vector<int64_t> divisors_up_to(int64_t extent, int64_t limit);

// The largest divisor of extent that is at most limit.
int64_t largest_divisor_up_to(int64_t extent, int64_t limit);

// The largest divisor of extent, at most limit, whose tile of that many broadcast rows by
// vector_columns fits the target's vector registers (registers_used); 1 when none does. A
// default's tile size: a block of two vectors (16 lanes on AVX2) leaves room for fewer
// rows than one of one vector.
int64_t largest_fitting_rows(int64_t extent, int64_t limit, int64_t vector_columns, const Target& target);

// divisors_up_to as the values of a knob.
std::vector<nlohmann::json> divisor_knob_values(int64_t extent, int64_t limit);

}  // namespace temper::schedule_space
