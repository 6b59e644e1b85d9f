// The AutoTVM-style template API: knobs span a ConfigSpace; a Config picks one choice per
// knob; a template (template.h) turns a Config into a schedule.
//
//   ConfigSpace space;
//   SplitOptions two_way;                          // factorisations into 2 loops
//   space.define_split("tile_i", 1024, two_way);
//   ReorderOptions any;
//   any.policy = ReorderPolicy::All;
//   space.define_reorder("order", 4, any);
//   space.define_annotate("inner", 1, AnnotatePolicy::TryVectorize);
//   space.define_knob("pack_b", {0, 1});
//   space.add_constraint("the register tile fits 16 registers", [](const Config& c) { ... });
//   Config c = space.get(12345);                  // mixed radix, knobs in definition order
//   std::vector<int64_t> f = c.split("tile_i");   // e.g. {128, 8}, outermost first
//
// Every knob is a list of choices; a choice is a JSON value (a split: its factor list; a
// reorder: a permutation of 0..n-1; an annotation: one name per axis, "none", "unroll" or
// "vec"; a knob: the value given). The index of a config is the mixed-radix number of
// its choice indices, the FIRST defined knob the least significant digit, so
// get(index(c)) == c. size() counts every point, including ones a constraint rejects;
// is_valid() applies the constraints.
//
// A config serialises as {"index": i, "knobs": {"tile_i": [128, 8], ...}}; from_json
// finds each knob's value among its choices, so a log stays readable when a knob's
// choices are reordered, and a value the space does not have is a UserError naming the
// knob and the value.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace temper::schedule_space {

enum class SplitPolicy {
  Factors,     // every ordered factorisation of the extent (exact splits, no tail)
  PowerOfTwo,  // every factor a power of two; the outermost takes ceil(extent / rest), tails allowed
  Both,        // the union of the two, without repeats
  Candidates,  // exactly the factor lists given
};

struct SplitOptions {
  SplitPolicy policy = SplitPolicy::Factors;
  int num_outputs = 2;  // loops after the split, outermost first
  // No factor but the outermost larger than this (0: no limit).
  int64_t max_factor = 0;
  std::vector<std::vector<int64_t>> candidates;  // for SplitPolicy::Candidates
};

enum class ReorderPolicy {
  Identity,            // only 0..n-1
  All,                 // every permutation of the n axes
  WithinIntervals,     // permutations that keep each axis inside its interval
  Candidates,          // exactly the permutations given
};

struct ReorderOptions {
  ReorderPolicy policy = ReorderPolicy::Identity;
  // For WithinIntervals: half-open [begin, end) ranges of axes, disjoint; axes outside
  // every interval stay in place.
  std::vector<std::pair<int, int>> intervals;
  std::vector<std::vector<int>> candidates;  // for ReorderPolicy::Candidates
};

enum class AnnotatePolicy {
  Unroll,        // every axis unrolled
  Vectorize,     // every axis vectorized
  TryUnroll,     // each axis: none or unroll
  TryVectorize,  // each axis: none or vec
  TryBoth,       // each axis: none, unroll or vec
};

enum class KnobKind { Split, Reorder, Annotate, Other };

struct Knob {
  std::string name;
  KnobKind kind;
  std::vector<nlohmann::json> choices;
};

class ConfigSpace;

// One point of a space: a choice index per knob. Cheap to copy; keeps a pointer to its
// space, which must outlive it.
class Config {
 public:
  Config() = default;
  Config(const ConfigSpace* space, std::vector<int64_t> choices);

  int64_t index() const;
  const std::vector<int64_t>& choices() const { return choices_; }
  const ConfigSpace& space() const { return *space_; }

  // The chosen value of knob `name`; UserError if the space has no such knob.
  const nlohmann::json& operator[](const std::string& name) const;
  std::vector<int64_t> split(const std::string& name) const;
  std::vector<int> reorder(const std::string& name) const;
  std::vector<std::string> annotate(const std::string& name) const;
  int64_t knob_int(const std::string& name) const;
  std::string knob_string(const std::string& name) const;

  nlohmann::json to_json() const;
  // "tile_i=[128,8] order=[0,2,1,3] ..." for logs.
  std::string to_string() const;

  bool operator==(const Config& other) const { return choices_ == other.choices_; }

 private:
  const ConfigSpace* space_ = nullptr;
  std::vector<int64_t> choices_;
};

class ConfigSpace {
 public:
  // Each define_* throws UserError for a name already defined or options that give no
  // choice at all (an extent below 1, a candidate whose product is not the extent, ...).
  void define_split(const std::string& name, int64_t extent, const SplitOptions& options = {});
  void define_reorder(const std::string& name, int num_axes, const ReorderOptions& options = {});
  void define_annotate(const std::string& name, int num_axes, AnnotatePolicy policy);
  void define_knob(const std::string& name, std::vector<nlohmann::json> values);
  // A rule every valid config satisfies; description says what is rejected and why.
  void add_constraint(std::string description, std::function<bool(const Config&)> valid);

  const std::vector<Knob>& knobs() const { return knobs_; }
  const Knob& knob(const std::string& name) const;  // UserError if unknown
  int knob_index(const std::string& name) const;    // UserError if unknown

  // Every point, valid or not: the product of the knobs' choice counts (saturates at
  // INT64_MAX, which then is not indexable).
  int64_t size() const;
  // index in [0, size()); UserError otherwise.
  Config get(int64_t index) const;
  Config from_json(const nlohmann::json& json) const;
  bool is_valid(const Config& config) const;
  // The description of the first constraint config breaks, or "" when it is valid.
  std::string why_invalid(const Config& config) const;

  // A uniformly drawn valid config; UserError when no valid config is found in
  // 10000 draws.
  Config sample(std::mt19937_64& rng) const;
  // The valid configs that differ from config in exactly one knob's choice.
  std::vector<Config> neighbours(const Config& config) const;

 private:
  std::vector<Knob> knobs_;
  std::vector<std::pair<std::string, std::function<bool(const Config&)>>> constraints_;
};

}  // namespace temper::schedule_space
