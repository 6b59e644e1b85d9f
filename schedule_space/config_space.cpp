#include "schedule_space/config_space.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "compiler/ir/error.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
// Draws sample() makes before it gives up on the constraints.
constexpr int kSampleDraws = 10000;
// define_reorder with ReorderPolicy::All lists n! permutations; 8! = 40320 is the most.
constexpr int kMaxPermutedAxes = 8;
// The most choices a generated knob (reorder within intervals, annotate) may list: each is
// a JSON array held in memory.
constexpr int64_t kMaxGeneratedChoices = 100000;

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a != 0 && b > kMaxInt / a) return kMaxInt;
  return a * b;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p = saturating_mul(p, x);
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

const char* kind_name(KnobKind kind) {
  switch (kind) {
    case KnobKind::Split:
      return "split";
    case KnobKind::Reorder:
      return "reorder";
    case KnobKind::Annotate:
      return "annotate";
    case KnobKind::Other:
      return "plain";
  }
  return "?";
}

std::string list_str(const std::vector<int64_t>& v) {
  return json(v).dump();
}

// ---------------------------------------------------------------- split choices

// Every ordered factorisation of `rest` into n factors taken from divisors (the
// divisors of the whole extent, ascending), each inner one at most max_inner (0: no
// limit). Lexicographic, outermost factor first.
void exact_factorisations(int64_t rest, int n, const std::vector<int64_t>& divisors, int64_t max_inner,
                          std::vector<int64_t>& prefix, std::vector<std::vector<int64_t>>& out) {
  bool outermost = prefix.empty();
  if (n == 1) {
    if (!outermost && max_inner > 0 && rest > max_inner) return;
    prefix.push_back(rest);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  for (int64_t f : divisors) {
    if (f > rest) break;
    if (rest % f != 0) continue;
    if (!outermost && max_inner > 0 && f > max_inner) break;
    prefix.push_back(f);
    exact_factorisations(rest / f, n - 1, divisors, max_inner, prefix, out);
    prefix.pop_back();
  }
}

std::vector<std::vector<int64_t>> factor_splits(int64_t extent, int n, int64_t max_factor) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d * d <= extent; ++d) {
    if (extent % d != 0) continue;
    divisors.push_back(d);
    if (d * d != extent) divisors.push_back(extent / d);
  }
  std::sort(divisors.begin(), divisors.end());
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> prefix;
  exact_factorisations(extent, n, divisors, max_factor, prefix, out);
  return out;
}

// Inner factors powers of two whose product is at most extent; the outermost
// ceil(extent / their product).
void power_of_two_inner(int64_t extent, int n, int64_t max_factor, int64_t inner_product, std::vector<int64_t>& inner,
                        std::vector<std::vector<int64_t>>& out) {
  if (static_cast<int>(inner.size()) == n - 1) {
    std::vector<int64_t> f = {ceil_div(extent, inner_product)};
    f.insert(f.end(), inner.begin(), inner.end());
    out.push_back(f);
    return;
  }
  for (int64_t p = 1; saturating_mul(inner_product, p) <= extent; p *= 2) {
    if (max_factor > 0 && p > max_factor) break;
    inner.push_back(p);
    power_of_two_inner(extent, n, max_factor, inner_product * p, inner, out);
    inner.pop_back();
  }
}

std::vector<std::vector<int64_t>> power_of_two_splits(int64_t extent, int n, int64_t max_factor) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> inner;
  power_of_two_inner(extent, n, max_factor, 1, inner, out);
  return out;
}

void check_split_candidate(const std::string& name, int64_t extent, const SplitOptions& options,
                           const std::vector<int64_t>& c) {
  if (static_cast<int>(c.size()) != options.num_outputs) {
    throw UserError(str("define_split '", name, "': candidate ", list_str(c), " has ", c.size(),
                        " factors but num_outputs is ", options.num_outputs));
  }
  for (int64_t f : c) {
    if (f < 1) throw UserError(str("define_split '", name, "': candidate ", list_str(c), " has a factor below 1"));
  }
  std::vector<int64_t> inner(c.begin() + 1, c.end());
  int64_t rest = product(inner);
  if (rest > extent) {
    throw UserError(str("define_split '", name, "': candidate ", list_str(c), " does not split extent ", extent,
                        ": its inner factors multiply to ", rest));
  }
  if (c[0] != ceil_div(extent, rest)) {
    throw UserError(
        str("define_split '", name, "': candidate ", list_str(c), " does not split extent ", extent,
            ": the outermost factor must be ceil(extent / the product of the others) = ", ceil_div(extent, rest)));
  }
  for (int64_t f : inner) {
    if (options.max_factor > 0 && f > options.max_factor) {
      throw UserError(str("define_split '", name, "': candidate ", list_str(c),
                          " has an inner factor above max_factor ", options.max_factor));
    }
  }
}

// ---------------------------------------------------------------- reorder choices

std::vector<int> identity(int n) {
  std::vector<int> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// Every permutation that permutes axes only within the given intervals: the product of
// each interval's permutations, the first interval varying slowest.
void interval_permutations(std::vector<int>& perm, const std::vector<std::pair<int, int>>& intervals, size_t which,
                           std::vector<std::vector<int>>& out) {
  if (which == intervals.size()) {
    out.push_back(perm);
    return;
  }
  auto [begin, end] = intervals[which];
  std::sort(perm.begin() + begin, perm.begin() + end);
  do {
    interval_permutations(perm, intervals, which + 1, out);
  } while (std::next_permutation(perm.begin() + begin, perm.begin() + end));
}

bool is_permutation_of_axes(const std::vector<int>& p, int n) {
  if (static_cast<int>(p.size()) != n) return false;
  std::vector<int> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  return sorted == identity(n);
}

// ---------------------------------------------------------------- annotate choices

std::vector<std::string> annotation_names(AnnotatePolicy policy) {
  switch (policy) {
    case AnnotatePolicy::Unroll:
      return {"unroll"};
    case AnnotatePolicy::Vectorize:
      return {"vec"};
    case AnnotatePolicy::TryUnroll:
      return {"none", "unroll"};
    case AnnotatePolicy::TryVectorize:
      return {"none", "vec"};
    case AnnotatePolicy::TryBoth:
      return {"none", "unroll", "vec"};
  }
  return {};
}

bool has_knob(const std::vector<Knob>& knobs, const std::string& name) {
  return std::any_of(knobs.begin(), knobs.end(), [&](const Knob& k) { return k.name == name; });
}

std::string knob_names(const std::vector<Knob>& knobs) {
  std::string s;
  for (const Knob& k : knobs) s += (s.empty() ? "" : ", ") + k.name;
  return s.empty() ? "no knobs" : s;
}

std::string choices_str(const Knob& knob) {
  constexpr size_t kShown = 8;
  std::string s;
  for (size_t i = 0; i < knob.choices.size() && i < kShown; ++i) s += (i ? ", " : "") + knob.choices[i].dump();
  if (knob.choices.size() > kShown) s += str(", ... (", knob.choices.size(), " in all)");
  return s;
}

}  // namespace

// ---------------------------------------------------------------- Config

Config::Config(const ConfigSpace* space, std::vector<int64_t> choices) : space_(space), choices_(std::move(choices)) {
  TEMPER_CHECK(space_ != nullptr, "a Config needs a space");
  TEMPER_CHECK(choices_.size() == space_->knobs().size(), "a Config needs one choice per knob");
  for (size_t k = 0; k < choices_.size(); ++k) {
    TEMPER_CHECK(choices_[k] >= 0 && choices_[k] < static_cast<int64_t>(space_->knobs()[k].choices.size()), "choice ",
                 choices_[k], " out of range for knob ", space_->knobs()[k].name);
  }
}

int64_t Config::index() const {
  TEMPER_CHECK(space_ != nullptr, "index() of an empty Config");
  if (space_->size() == kMaxInt) {
    throw UserError("Config::index: the space has more than 2^63 - 1 points and cannot be indexed; use to_json");
  }
  int64_t index = 0;
  int64_t radix = 1;
  for (size_t k = 0; k < choices_.size(); ++k) {
    index += choices_[k] * radix;
    radix *= static_cast<int64_t>(space_->knobs()[k].choices.size());
  }
  return index;
}

const nlohmann::json& Config::operator[](const std::string& name) const {
  TEMPER_CHECK(space_ != nullptr, "lookup in an empty Config");
  int k = space_->knob_index(name);
  return space_->knobs()[k].choices[choices_[k]];
}

namespace {
const json& typed_value(const Config& c, const std::string& name, KnobKind kind, const char* accessor) {
  const Knob& knob = c.space().knob(name);
  if (knob.kind != kind) {
    throw UserError(str("Config::", accessor, "('", name, "'): '", name, "' is a ", kind_name(knob.kind),
                        " knob, not a ", kind_name(kind)));
  }
  return c[name];
}
}  // namespace

std::vector<int64_t> Config::split(const std::string& name) const {
  return typed_value(*this, name, KnobKind::Split, "split").get<std::vector<int64_t>>();
}

std::vector<int> Config::reorder(const std::string& name) const {
  return typed_value(*this, name, KnobKind::Reorder, "reorder").get<std::vector<int>>();
}

std::vector<std::string> Config::annotate(const std::string& name) const {
  return typed_value(*this, name, KnobKind::Annotate, "annotate").get<std::vector<std::string>>();
}

int64_t Config::knob_int(const std::string& name) const {
  const json& v = (*this)[name];
  if (!v.is_number_integer())
    throw UserError(str("Config::knob_int('", name, "'): the value ", v.dump(), " is not an integer"));
  return v.get<int64_t>();
}

std::string Config::knob_string(const std::string& name) const {
  const json& v = (*this)[name];
  if (!v.is_string())
    throw UserError(str("Config::knob_string('", name, "'): the value ", v.dump(), " is not a string"));
  return v.get<std::string>();
}

nlohmann::json Config::to_json() const {
  TEMPER_CHECK(space_ != nullptr, "to_json() of an empty Config");
  json knobs = json::object();
  for (size_t k = 0; k < choices_.size(); ++k) {
    const Knob& knob = space_->knobs()[k];
    knobs[knob.name] = knob.choices[choices_[k]];
  }
  // A space too large to index still serialises: from_json matches by value.
  json index_value = space_->size() == kMaxInt ? json(nullptr) : json(index());
  return {{"index", index_value}, {"knobs", knobs}};
}

std::string Config::to_string() const {
  TEMPER_CHECK(space_ != nullptr, "to_string() of an empty Config");
  std::string s;
  for (size_t k = 0; k < choices_.size(); ++k) {
    const Knob& knob = space_->knobs()[k];
    s += (k ? " " : "") + knob.name + "=" + knob.choices[choices_[k]].dump();
  }
  return s;
}

// ---------------------------------------------------------------- ConfigSpace: definitions

namespace {
void check_new_name(const std::vector<Knob>& knobs, const std::string& name, const char* what) {
  if (name.empty()) throw UserError(str(what, ": a knob needs a name"));
  for (const Knob& k : knobs) {
    if (k.name == name) throw UserError(str(what, ": knob '", name, "' is already defined; knob names must be unique"));
  }
}
}  // namespace

void ConfigSpace::define_split(const std::string& name, int64_t extent, const SplitOptions& options) {
  check_new_name(knobs_, name, "define_split");
  if (extent < 1) throw UserError(str("define_split '", name, "': extent ", extent, " must be at least 1"));
  if (options.num_outputs < 1) {
    throw UserError(str("define_split '", name, "': num_outputs ", options.num_outputs, " must be at least 1"));
  }
  if (options.max_factor < 0) {
    throw UserError(str("define_split '", name, "': max_factor ", options.max_factor, " must be 0 (no limit) or more"));
  }
  if (options.policy != SplitPolicy::Candidates && !options.candidates.empty()) {
    throw UserError(str("define_split '", name, "': candidates are given but the policy is not Candidates"));
  }
  std::vector<std::vector<int64_t>> splits;
  switch (options.policy) {
    case SplitPolicy::Factors:
      splits = factor_splits(extent, options.num_outputs, options.max_factor);
      break;
    case SplitPolicy::PowerOfTwo:
      splits = power_of_two_splits(extent, options.num_outputs, options.max_factor);
      break;
    case SplitPolicy::Both: {
      splits = factor_splits(extent, options.num_outputs, options.max_factor);
      std::set<std::vector<int64_t>> seen(splits.begin(), splits.end());
      for (std::vector<int64_t>& s : power_of_two_splits(extent, options.num_outputs, options.max_factor)) {
        if (seen.insert(s).second) splits.push_back(std::move(s));
      }
      break;
    }
    case SplitPolicy::Candidates: {
      std::set<std::vector<int64_t>> seen;
      for (const std::vector<int64_t>& c : options.candidates) {
        check_split_candidate(name, extent, options, c);
        if (!seen.insert(c).second) {
          throw UserError(str("define_split '", name, "': candidate ", list_str(c), " is listed twice"));
        }
        splits.push_back(c);
      }
      break;
    }
  }
  if (splits.empty()) {
    throw UserError(str("define_split '", name, "': no split of extent ", extent, " into ", options.num_outputs,
                        " factors satisfies the options (give candidates, or raise max_factor)"));
  }
  Knob knob{name, KnobKind::Split, {}};
  for (const std::vector<int64_t>& s : splits) knob.choices.emplace_back(s);
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::define_reorder(const std::string& name, int num_axes, const ReorderOptions& options) {
  check_new_name(knobs_, name, "define_reorder");
  if (num_axes < 1) throw UserError(str("define_reorder '", name, "': num_axes ", num_axes, " must be at least 1"));
  if (options.policy != ReorderPolicy::WithinIntervals && !options.intervals.empty()) {
    throw UserError(str("define_reorder '", name, "': intervals are given but the policy is not WithinIntervals"));
  }
  if (options.policy != ReorderPolicy::Candidates && !options.candidates.empty()) {
    throw UserError(str("define_reorder '", name, "': candidates are given but the policy is not Candidates"));
  }
  std::vector<std::vector<int>> perms;
  switch (options.policy) {
    case ReorderPolicy::Identity:
      perms.push_back(identity(num_axes));
      break;
    case ReorderPolicy::All: {
      if (num_axes > kMaxPermutedAxes) {
        throw UserError(str("define_reorder '", name, "': policy All over ", num_axes, " axes is too many (at most ",
                            kMaxPermutedAxes, "); use WithinIntervals or Candidates"));
      }
      std::vector<int> p = identity(num_axes);
      do {
        perms.push_back(p);
      } while (std::next_permutation(p.begin(), p.end()));
      break;
    }
    case ReorderPolicy::WithinIntervals: {
      if (options.intervals.empty()) {
        throw UserError(str("define_reorder '", name, "': policy WithinIntervals needs at least one interval"));
      }
      std::vector<std::pair<int, int>> sorted = options.intervals;
      std::sort(sorted.begin(), sorted.end());
      int covered = 0;
      int64_t count = 1;  // the product of the intervals' factorials
      for (auto [begin, end] : sorted) {
        if (begin < 0 || end > num_axes || begin >= end) {
          throw UserError(str("define_reorder '", name, "': interval [", begin, ", ", end,
                              ") is not a non-empty range of the ", num_axes, " axes"));
        }
        if (begin < covered) {
          throw UserError(str("define_reorder '", name, "': interval [", begin, ", ", end,
                              ") overlaps another; intervals must be disjoint"));
        }
        for (int64_t len = 2; len <= end - begin; ++len) count = saturating_mul(count, len);
        covered = end;
      }
      if (count > kMaxGeneratedChoices) {
        throw UserError(str("define_reorder '", name, "': the intervals allow ",
                            count == kMaxInt ? "too many" : str(count), " permutations (at most ", kMaxGeneratedChoices,
                            "); use smaller intervals or Candidates"));
      }
      std::vector<int> p = identity(num_axes);
      interval_permutations(p, options.intervals, 0, perms);
      break;
    }
    case ReorderPolicy::Candidates: {
      if (options.candidates.empty()) {
        throw UserError(str("define_reorder '", name, "': policy Candidates needs at least one permutation"));
      }
      std::set<std::vector<int>> seen;
      for (const std::vector<int>& c : options.candidates) {
        if (!is_permutation_of_axes(c, num_axes)) {
          throw UserError(str("define_reorder '", name, "': candidate ", json(c).dump(), " is not a permutation of 0..",
                              num_axes - 1));
        }
        if (!seen.insert(c).second) {
          throw UserError(str("define_reorder '", name, "': candidate ", json(c).dump(), " is listed twice"));
        }
        perms.push_back(c);
      }
      break;
    }
  }
  Knob knob{name, KnobKind::Reorder, {}};
  for (const std::vector<int>& p : perms) knob.choices.emplace_back(p);
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::define_annotate(const std::string& name, int num_axes, AnnotatePolicy policy) {
  check_new_name(knobs_, name, "define_annotate");
  if (num_axes < 1) throw UserError(str("define_annotate '", name, "': num_axes ", num_axes, " must be at least 1"));
  std::vector<std::string> per_axis = annotation_names(policy);
  int64_t count = 1;
  for (int a = 0; a < num_axes; ++a) {
    count = saturating_mul(count, static_cast<int64_t>(per_axis.size()));
    if (count > kMaxGeneratedChoices) {
      throw UserError(str("define_annotate '", name, "': ", num_axes, " axes give more than ", kMaxGeneratedChoices,
                          " annotations; annotate fewer axes per knob"));
    }
  }
  Knob knob{name, KnobKind::Annotate, {}};
  // Mixed radix over the axes, the first axis varying fastest.
  for (int64_t i = 0; i < count; ++i) {
    std::vector<std::string> names;
    int64_t rest = i;
    for (int a = 0; a < num_axes; ++a) {
      names.push_back(per_axis[rest % per_axis.size()]);
      rest /= static_cast<int64_t>(per_axis.size());
    }
    knob.choices.emplace_back(names);
  }
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::define_knob(const std::string& name, std::vector<nlohmann::json> values) {
  check_new_name(knobs_, name, "define_knob");
  if (values.empty()) throw UserError(str("define_knob '", name, "': a knob needs at least one value"));
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) {
        throw UserError(str("define_knob '", name, "': value ", values[i].dump(), " is listed twice"));
      }
    }
  }
  knobs_.push_back(Knob{name, KnobKind::Other, std::move(values)});
}

void ConfigSpace::add_constraint(std::string description, std::function<bool(const Config&)> valid) {
  TEMPER_CHECK(valid != nullptr, "constraint '", description, "' has no predicate");
  constraints_.emplace_back(std::move(description), std::move(valid));
}

// ---------------------------------------------------------------- ConfigSpace: lookups

const Knob& ConfigSpace::knob(const std::string& name) const {
  return knobs_[knob_index(name)];
}

int ConfigSpace::knob_index(const std::string& name) const {
  for (size_t k = 0; k < knobs_.size(); ++k) {
    if (knobs_[k].name == name) return static_cast<int>(k);
  }
  throw UserError(str("unknown knob '", name, "'; the space has: ", knob_names(knobs_)));
}

int64_t ConfigSpace::size() const {
  int64_t n = 1;
  for (const Knob& k : knobs_) n = saturating_mul(n, static_cast<int64_t>(k.choices.size()));
  return n;
}

Config ConfigSpace::get(int64_t index) const {
  int64_t n = size();
  if (n == kMaxInt) throw UserError("ConfigSpace::get: the space has more than 2^63 - 1 points and cannot be indexed");
  if (index < 0 || index >= n) {
    throw UserError(str("ConfigSpace::get: index ", index, " is outside the space's [0, ", n, ")"));
  }
  std::vector<int64_t> choices;
  for (const Knob& k : knobs_) {
    int64_t radix = static_cast<int64_t>(k.choices.size());
    choices.push_back(index % radix);
    index /= radix;
  }
  return Config(this, std::move(choices));
}

Config ConfigSpace::from_json(const nlohmann::json& json) const {
  if (!json.is_object() || !json.contains("knobs") || !json["knobs"].is_object()) {
    throw UserError(str("config JSON must be an object {\"index\": ..., \"knobs\": {...}}; got ", json.dump()));
  }
  const nlohmann::json& values = json["knobs"];
  for (const auto& item : values.items()) {
    if (!has_knob(knobs_, item.key())) {
      throw UserError(str("config JSON names unknown knob '", item.key(), "'; the space has: ", knob_names(knobs_)));
    }
  }
  std::vector<int64_t> choices;
  for (const Knob& k : knobs_) {
    if (!values.contains(k.name)) throw UserError(str("config JSON has no value for knob '", k.name, "'"));
    const nlohmann::json& v = values[k.name];
    auto it = std::find(k.choices.begin(), k.choices.end(), v);
    if (it == k.choices.end()) {
      throw UserError(str("knob '", k.name, "' has no choice ", v.dump(), "; its choices are ", choices_str(k)));
    }
    choices.push_back(it - k.choices.begin());
  }
  return Config(this, std::move(choices));
}

bool ConfigSpace::is_valid(const Config& config) const {
  return why_invalid(config).empty();
}

std::string ConfigSpace::why_invalid(const Config& config) const {
  TEMPER_CHECK(&config.space() == this, "a Config checked against a space it does not belong to");
  for (const auto& [description, valid] : constraints_) {
    if (!valid(config)) return description;
  }
  return "";
}

Config ConfigSpace::sample(std::mt19937_64& rng) const {
  // Each knob drawn uniformly makes the point uniform over the whole space; rejecting
  // the invalid ones keeps it uniform over the valid ones.
  std::vector<int> rejections(constraints_.size(), 0);
  for (int draw = 0; draw < kSampleDraws; ++draw) {
    std::vector<int64_t> choices;
    for (const Knob& k : knobs_) {
      std::uniform_int_distribution<int64_t> pick(0, static_cast<int64_t>(k.choices.size()) - 1);
      choices.push_back(pick(rng));
    }
    Config c(this, std::move(choices));
    size_t broken = 0;
    while (broken < constraints_.size() && constraints_[broken].second(c)) ++broken;
    if (broken == constraints_.size()) return c;
    ++rejections[broken];
  }
  size_t worst = std::max_element(rejections.begin(), rejections.end()) - rejections.begin();
  throw UserError(str("ConfigSpace::sample: no valid config in ", kSampleDraws, " draws; the constraint '",
                      constraints_[worst].first, "' rejected ", rejections[worst], " of them"));
}

std::vector<Config> ConfigSpace::neighbours(const Config& config) const {
  TEMPER_CHECK(&config.space() == this, "neighbours of a Config from another space");
  std::vector<Config> out;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    for (int64_t c = 0; c < static_cast<int64_t>(knobs_[k].choices.size()); ++c) {
      if (c == config.choices()[k]) continue;
      std::vector<int64_t> choices = config.choices();
      choices[k] = c;
      Config n(this, std::move(choices));
      if (is_valid(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace temper::schedule_space
