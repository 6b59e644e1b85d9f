// The Schedule object: random variables, lookups, sampling and the trace. The
// primitives live in schedule_loops.cpp, schedule_compute_at.cpp, schedule_cache.cpp,
// schedule_reduction.cpp and schedule_tensorize.cpp.
#include "compiler/schedule/schedule.h"

#include <cmath>
#include <set>

#include "compiler/ir/printer.h"
#include "compiler/schedule/schedule_ir.h"

namespace temper {

using schedule_detail::BlockSite;
using schedule_detail::LoopSite;

SplitFactor::SplitFactor(int64_t value) : value_(value) {
  if (value == -1) value_ = std::monostate{};
}
SplitFactor::SplitFactor(int value) : SplitFactor(int64_t{value}) {}
SplitFactor::SplitFactor(ExprRV value) : value_(value) {}
SplitFactor::SplitFactor(std::nullopt_t) : value_(std::monostate{}) {}

RVRef ref(LoopRV rv) {
  return RVRef{RVRef::Kind::Loop, rv.id};
}
RVRef ref(BlockRV rv) {
  return RVRef{RVRef::Kind::Block, rv.id};
}
RVRef ref(ExprRV rv) {
  return RVRef{RVRef::Kind::Expr, rv.id};
}

Schedule::Schedule(PrimFunc f, uint64_t seed) : func_(std::move(f)), rng_state_(seed) {
  std::set<std::string> names;
  for (const BlockSite& b : schedule_detail::collect_blocks(func_.body)) {
    if (!names.insert(b.block()->name).second) {
      throw ScheduleError(str("function ", func_.name, " has two blocks named ", b.block()->name,
                              "; a schedule finds blocks by name, so block names must be unique"));
    }
  }
}

// splitmix64: a small generator whose sequence is the same on every platform, so a
// seed reproduces a sampled schedule anywhere.
uint64_t Schedule::next_random() {
  uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

LoopRV Schedule::new_loop_rv(const Var& v) {
  rvs_.emplace_back(v);
  return LoopRV{static_cast<int>(rvs_.size()) - 1};
}
BlockRV Schedule::new_block_rv(const std::string& name) {
  rvs_.emplace_back(name);
  return BlockRV{static_cast<int>(rvs_.size()) - 1};
}
ExprRV Schedule::new_expr_rv(int64_t value) {
  rvs_.emplace_back(value);
  return ExprRV{static_cast<int>(rvs_.size()) - 1};
}

namespace {
template <typename T>
const T& rv_value(const std::vector<std::variant<Var, std::string, int64_t>>& rvs, int id, const char* what) {
  if (id < 0 || id >= static_cast<int>(rvs.size()) || !std::holds_alternative<T>(rvs[id])) {
    throw ScheduleError(str(what, " ", id, " does not belong to this schedule"));
  }
  return std::get<T>(rvs[id]);
}
}  // namespace

LoopSite Schedule::find(LoopRV loop, const char* primitive) const {
  const Var& v = rv_value<Var>(rvs_, loop.id, "LoopRV");
  auto site = schedule_detail::find_loop(func_.body, v.get());
  if (!site) {
    throw ScheduleError(str(primitive, ": loop ", v.name(), " no longer exists in ", func_.name,
                            " (a split, fuse, compute_at or tensorize replaced it); use the loops that "
                            "primitive returned, or get_loops again"));
  }
  return *site;
}

BlockSite Schedule::find(BlockRV block, const char* primitive) const {
  const std::string& name = rv_value<std::string>(rvs_, block.id, "BlockRV");
  auto site = schedule_detail::find_block(func_.body, name);
  if (!site) {
    throw ScheduleError(
        str(primitive, ": block ", name, " no longer exists in ", func_.name, " (compute_inline removed it)"));
  }
  return *site;
}

BlockRV Schedule::get_block(const std::string& name) {
  if (!schedule_detail::find_block(func_.body, name)) {
    std::string names;
    for (const BlockSite& b : schedule_detail::collect_blocks(func_.body)) {
      names += (names.empty() ? "" : ", ") + b.block()->name;
    }
    throw ScheduleError(
        str("get_block: function ", func_.name, " has no block named ", name, "; its blocks are ", names));
  }
  BlockRV rv = new_block_rv(name);
  record(InstKind::GetBlock, {}, nlohmann::json::array({name}), {ref(rv)});
  return rv;
}

std::vector<LoopRV> Schedule::get_loops(BlockRV block) {
  BlockSite site = find(block, "get_loops");
  std::vector<LoopRV> out;
  std::vector<RVRef> refs;
  for (const ForNode* f : site.loops()) {
    out.push_back(new_loop_rv(f->loop_var));
    refs.push_back(ref(out.back()));
  }
  record(InstKind::GetLoops, {ref(block)}, nlohmann::json::array(), refs);
  return out;
}

int64_t Schedule::get(ExprRV value) const {
  return rv_value<int64_t>(rvs_, value.id, "ExprRV");
}

Var Schedule::loop_var(LoopRV loop) const {
  return find(loop, "loop_var").loop()->loop_var;
}

const ForNode* Schedule::loop(LoopRV loop) const {
  return find(loop, "loop").loop();
}

std::string Schedule::block_name(BlockRV block) const {
  return rv_value<std::string>(rvs_, block.id, "BlockRV");
}

int64_t Schedule::factor_value(const SplitFactor& f) const {
  if (auto* c = std::get_if<int64_t>(&f.value())) return *c;
  if (auto* rv = std::get_if<ExprRV>(&f.value())) return get(*rv);
  return -1;
}

void Schedule::record(InstKind kind, std::vector<InstInput> inputs, nlohmann::json attrs, std::vector<RVRef> outputs,
                      std::optional<std::vector<int64_t>> decision) {
  trace_.append(Instruction{kind, std::move(inputs), std::move(attrs), std::move(outputs), std::move(decision)});
}

// ------------------------------------------------------------------ sampling

std::vector<int64_t> prime_factors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) out.push_back(n);
  return out;
}

namespace {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::vector<ExprRV> Schedule::sample_perfect_tile(LoopRV loop_rv, int n, int max_innermost_factor,
                                                  std::optional<std::vector<int64_t>> decision) {
  const ForNode* f = find(loop_rv, "sample_perfect_tile").loop();
  const int64_t* extent = as_const_int(f->extent);
  if (!extent) {
    throw ScheduleError(str("sample_perfect_tile: loop ", f->loop_var.name(), " has a non-constant extent ", f->extent,
                            "; only loops of constant extent can be tiled"));
  }
  if (n < 1 || max_innermost_factor < 1) {
    throw ScheduleError(str("sample_perfect_tile: needs n >= 1 and max_innermost_factor >= 1, got n = ", n,
                            ", max_innermost_factor = ", max_innermost_factor));
  }
  std::vector<int64_t> factors;
  if (decision) {
    factors = *decision;
    int64_t product = 1;
    bool positive = true;
    for (int64_t x : factors) {
      positive = positive && x >= 1;
      product *= x;
    }
    if (static_cast<int>(factors.size()) != n || !positive || product != *extent ||
        factors.back() > max_innermost_factor) {
      throw ScheduleError(str("sample_perfect_tile: decision ", list_str(factors), " for loop ", f->loop_var.name(),
                              " is not ", n, " positive factors of its extent ", *extent,
                              " with the innermost at most ", max_innermost_factor));
    }
  } else {
    std::vector<int64_t> innermost_choices;
    for (int64_t d = 1; d <= std::min<int64_t>(*extent, max_innermost_factor); ++d) {
      if (*extent % d == 0 && (n > 1 || d == *extent)) innermost_choices.push_back(d);
    }
    if (innermost_choices.empty()) {
      throw ScheduleError(str("sample_perfect_tile: loop ", f->loop_var.name(), " of extent ", *extent,
                              " cannot be one factor of at most ", max_innermost_factor, "; ask for n >= 2"));
    }
    factors.assign(n, 1);
    factors.back() = innermost_choices[next_random() % innermost_choices.size()];
    for (int64_t p : prime_factors(*extent / factors.back())) factors[next_random() % (n - 1)] *= p;
  }
  std::vector<ExprRV> out;
  std::vector<RVRef> refs;
  for (int64_t x : factors) {
    out.push_back(new_expr_rv(x));
    refs.push_back(ref(out.back()));
  }
  record(InstKind::SamplePerfectTile, {ref(loop_rv)}, nlohmann::json::array({n, max_innermost_factor}), refs, factors);
  return out;
}

ExprRV Schedule::sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                                    std::optional<int> decision) {
  if (candidates.empty() || candidates.size() != probs.size()) {
    throw ScheduleError(str("sample_categorical: needs one probability per candidate and at least one candidate, got ",
                            candidates.size(), " candidates and ", probs.size(), " probabilities"));
  }
  double total = 0;
  for (double p : probs) {
    if (!(p >= 0) || !std::isfinite(p)) {
      throw ScheduleError(str("sample_categorical: probability ", p, " is not a finite non-negative number"));
    }
    total += p;
  }
  if (total <= 0) throw ScheduleError("sample_categorical: the probabilities sum to zero");
  int index = 0;
  if (decision) {
    if (*decision < 0 || *decision >= static_cast<int>(candidates.size())) {
      throw ScheduleError(str("sample_categorical: decision ", *decision, " is not an index into the ",
                              candidates.size(), " candidates"));
    }
    index = *decision;
  } else {
    // u in [0, total); rounding can leave it past the last bucket, which then wins.
    double u = static_cast<double>(next_random() >> 11) * 0x1.0p-53 * total;
    for (size_t i = 0; i < probs.size(); ++i) {
      if (probs[i] == 0) continue;
      index = static_cast<int>(i);
      if (u < probs[i]) break;
      u -= probs[i];
    }
  }
  ExprRV out = new_expr_rv(candidates[index]);
  record(InstKind::SampleCategorical, {}, nlohmann::json::array({candidates, probs}), {ref(out)},
         std::vector<int64_t>{index});
  return out;
}

}  // namespace temper
