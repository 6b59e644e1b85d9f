// ConfigSpace: the choices each define_* policy lists, mixed-radix indexing, sampling,
// neighbours, constraints, and the JSON form of a config with its errors.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "compiler/ir/error.h"
#include "schedule_space/config_space.h"
#include "user_error_test_util.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;
using Factors = std::vector<std::vector<int64_t>>;

Factors split_choices(const ConfigSpace& space, const std::string& name) {
  Factors out;
  for (const json& c : space.knob(name).choices) out.push_back(c.get<std::vector<int64_t>>());
  return out;
}

// Options by position: designated initializers that leave fields out trip -Wextra.
SplitOptions split_options(SplitPolicy policy, int num_outputs, int64_t max_factor = 0, Factors candidates = {}) {
  SplitOptions o;
  o.policy = policy;
  o.num_outputs = num_outputs;
  o.max_factor = max_factor;
  o.candidates = std::move(candidates);
  return o;
}

ReorderOptions reorder_options(ReorderPolicy policy, std::vector<std::pair<int, int>> intervals = {},
                               std::vector<std::vector<int>> candidates = {}) {
  ReorderOptions o;
  o.policy = policy;
  o.intervals = std::move(intervals);
  o.candidates = std::move(candidates);
  return o;
}

using testing_util::error_of;

// ---------------------------------------------------------------- define_split

TEST(ConfigSpaceSplit, FactorsListsEveryOrderedFactorisation) {
  ConfigSpace space;
  space.define_split("two", 12, split_options(SplitPolicy::Factors, 2));
  space.define_split("three", 12, split_options(SplitPolicy::Factors, 3));
  EXPECT_EQ(split_choices(space, "two"), (Factors{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}}));
  // 12 = 2^2 * 3 into 3 ordered factors: C(4,2) * C(3,2) = 18.
  Factors three = split_choices(space, "three");
  EXPECT_EQ(three.size(), 18u);
  std::set<std::vector<int64_t>> distinct(three.begin(), three.end());
  EXPECT_EQ(distinct.size(), 18u);
  for (const auto& f : three) EXPECT_EQ(f[0] * f[1] * f[2], 12);
  EXPECT_EQ(space.knob("three").kind, KnobKind::Split);
  EXPECT_EQ(space.size(), 6 * 18);
}

TEST(ConfigSpaceSplit, MaxFactorLimitsTheInnerFactorsOnly) {
  ConfigSpace space;
  space.define_split("s", 12, split_options(SplitPolicy::Factors, 2, 4));
  EXPECT_EQ(split_choices(space, "s"), (Factors{{3, 4}, {4, 3}, {6, 2}, {12, 1}}));
  space.define_split("t", 16, split_options(SplitPolicy::Factors, 3, 2));
  EXPECT_EQ(split_choices(space, "t"), (Factors{{4, 2, 2}, {8, 1, 2}, {8, 2, 1}, {16, 1, 1}}));
}

TEST(ConfigSpaceSplit, PowerOfTwoLeavesTailsToTheOutermost) {
  ConfigSpace space;
  space.define_split("s", 12, split_options(SplitPolicy::PowerOfTwo, 2));
  EXPECT_EQ(split_choices(space, "s"), (Factors{{12, 1}, {6, 2}, {3, 4}, {2, 8}}));
  space.define_split("t", 5, split_options(SplitPolicy::PowerOfTwo, 3, 2));
  EXPECT_EQ(split_choices(space, "t"), (Factors{{5, 1, 1}, {3, 1, 2}, {3, 2, 1}, {2, 2, 2}}));
}

TEST(ConfigSpaceSplit, BothIsTheUnionWithoutRepeats) {
  ConfigSpace space;
  space.define_split("s", 12, split_options(SplitPolicy::Both, 2));
  EXPECT_EQ(split_choices(space, "s"), (Factors{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}, {2, 8}}));
}

TEST(ConfigSpaceSplit, CandidatesAreTakenAsGivenAndChecked) {
  ConfigSpace space;
  space.define_split("s", 100, split_options(SplitPolicy::Candidates, 2, 0, {{25, 4}, {13, 8}, {100, 1}}));
  EXPECT_EQ(split_choices(space, "s"), (Factors{{25, 4}, {13, 8}, {100, 1}}));

  EXPECT_NE(error_of([] {
              ConfigSpace s;
              s.define_split("s", 100, split_options(SplitPolicy::Candidates, 2, 0, {{12, 8}}));
            }).find("does not split extent 100"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ConfigSpace s;
              s.define_split("s", 12, split_options(SplitPolicy::Candidates, 2, 0, {{3, 2, 2}}));
            }).find("has 3 factors but num_outputs is 2"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ConfigSpace s;
              s.define_split("s", 12, split_options(SplitPolicy::Candidates, 2, 0, {{3, 4}, {3, 4}}));
            }).find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ConfigSpace s;
              s.define_split("s", 12, split_options(SplitPolicy::Candidates, 2, 2, {{3, 4}}));
            }).find("above max_factor 2"),
            std::string::npos);
}

TEST(ConfigSpaceSplit, BadOptionsAreUserErrors) {
  ConfigSpace space;
  EXPECT_NE(error_of([&] { space.define_split("s", 0); }).find("extent 0 must be at least 1"), std::string::npos);
  EXPECT_NE(error_of([&] { space.define_split("s", 8, split_options(SplitPolicy::Factors, 0)); }).find("num_outputs 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              space.define_split("s", 8, split_options(SplitPolicy::Factors, 2, 0, {{2, 4}}));
            }).find("policy is not Candidates"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              space.define_split("s", 8, split_options(SplitPolicy::Candidates, 2));
            }).find("no split of extent 8"),
            std::string::npos);
  space.define_split("s", 8);
  EXPECT_NE(error_of([&] { space.define_knob("s", {1}); }).find("'s' is already defined"), std::string::npos);
}

// ---------------------------------------------------------------- define_reorder

std::vector<std::vector<int>> reorder_choices(const ConfigSpace& space, const std::string& name) {
  std::vector<std::vector<int>> out;
  for (const json& c : space.knob(name).choices) out.push_back(c.get<std::vector<int>>());
  return out;
}

TEST(ConfigSpaceReorder, EveryPolicy) {
  ConfigSpace space;
  space.define_reorder("id", 3);
  space.define_reorder("all", 3, reorder_options(ReorderPolicy::All));
  space.define_reorder("within", 5, reorder_options(ReorderPolicy::WithinIntervals, {{0, 2}, {3, 5}}));
  space.define_reorder("given", 3, reorder_options(ReorderPolicy::Candidates, {}, {{2, 0, 1}, {0, 1, 2}}));
  EXPECT_EQ(reorder_choices(space, "id"), (std::vector<std::vector<int>>{{0, 1, 2}}));
  EXPECT_EQ(reorder_choices(space, "all"),
            (std::vector<std::vector<int>>{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}));
  EXPECT_EQ(reorder_choices(space, "within"),
            (std::vector<std::vector<int>>{{0, 1, 2, 3, 4}, {0, 1, 2, 4, 3}, {1, 0, 2, 3, 4}, {1, 0, 2, 4, 3}}));
  EXPECT_EQ(reorder_choices(space, "given"), (std::vector<std::vector<int>>{{2, 0, 1}, {0, 1, 2}}));
  EXPECT_EQ(space.knob("all").kind, KnobKind::Reorder);
}

TEST(ConfigSpaceReorder, BadOptionsAreUserErrors) {
  ConfigSpace space;
  auto define = [&](int n, ReorderOptions o) { return error_of([&] { space.define_reorder("r", n, o); }); };
  EXPECT_NE(define(3, reorder_options(ReorderPolicy::WithinIntervals, {{0, 2}, {1, 3}})).find("overlaps"),
            std::string::npos);
  EXPECT_NE(define(3, reorder_options(ReorderPolicy::WithinIntervals, {{2, 4}})).find("[2, 4)"), std::string::npos);
  EXPECT_NE(define(3, reorder_options(ReorderPolicy::Candidates, {}, {{0, 0, 1}})).find("not a permutation"),
            std::string::npos);
  EXPECT_NE(define(9, reorder_options(ReorderPolicy::All)).find("too many"), std::string::npos);
  EXPECT_NE(
      define(16, reorder_options(ReorderPolicy::WithinIntervals, {{0, 8}, {8, 16}})).find("1625702400 permutations"),
      std::string::npos);
  EXPECT_NE(define(0, reorder_options(ReorderPolicy::Identity)).find("num_axes 0"), std::string::npos);
}

// ---------------------------------------------------------------- define_annotate, define_knob

TEST(ConfigSpaceAnnotate, EveryPolicy) {
  ConfigSpace space;
  space.define_annotate("u", 2, AnnotatePolicy::Unroll);
  space.define_annotate("v", 2, AnnotatePolicy::Vectorize);
  space.define_annotate("tu", 2, AnnotatePolicy::TryUnroll);
  space.define_annotate("tv", 1, AnnotatePolicy::TryVectorize);
  space.define_annotate("tb", 2, AnnotatePolicy::TryBoth);
  EXPECT_EQ(space.knob("u").choices, (std::vector<json>{{"unroll", "unroll"}}));
  EXPECT_EQ(space.knob("v").choices, (std::vector<json>{{"vec", "vec"}}));
  EXPECT_EQ(space.knob("tu").choices,
            (std::vector<json>{{"none", "none"}, {"unroll", "none"}, {"none", "unroll"}, {"unroll", "unroll"}}));
  EXPECT_EQ(space.knob("tv").choices, (std::vector<json>{json::array({"none"}), json::array({"vec"})}));
  EXPECT_EQ(space.knob("tb").choices.size(), 9u);
  EXPECT_EQ(space.knob("tb").choices[5], json({"vec", "unroll"}));
  Config c = space.get(0);
  EXPECT_EQ(c.annotate("u"), (std::vector<std::string>{"unroll", "unroll"}));
  EXPECT_NE(error_of([&] { space.define_annotate("many", 11, AnnotatePolicy::TryBoth); }).find("more than 100000"),
            std::string::npos);
}

TEST(ConfigSpaceKnob, ValuesAreKeptAndTyped) {
  ConfigSpace space;
  space.define_knob("unroll", {0, 16, 64});
  space.define_knob("layout", {"NCHW", "NHWC"});
  EXPECT_EQ(space.knob("unroll").kind, KnobKind::Other);
  Config c = space.get(2 + 3 * 1);
  EXPECT_EQ(c.knob_int("unroll"), 64);
  EXPECT_EQ(c.knob_string("layout"), "NHWC");
  EXPECT_NE(error_of([&] { c.knob_int("layout"); }).find("is not an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { c.split("unroll"); }).find("'unroll' is a plain knob, not a split"), std::string::npos);
  EXPECT_NE(error_of([&] { c["tile"]; }).find("unknown knob 'tile'; the space has: unroll, layout"), std::string::npos);
  EXPECT_NE(error_of([&] { space.define_knob("empty", {}); }).find("at least one value"), std::string::npos);
  EXPECT_NE(error_of([&] { space.define_knob("dup", {1, 2, 1}); }).find("value 1 is listed twice"), std::string::npos);
}

// ---------------------------------------------------------------- indexing

// A space of three knobs of 6, 2 and 3 choices: 36 points.
ConfigSpace small_space() {
  ConfigSpace space;
  space.define_split("tile", 12, split_options(SplitPolicy::Factors, 2));
  space.define_annotate("inner", 1, AnnotatePolicy::TryVectorize);
  space.define_knob("unroll", {0, 8, 32});
  return space;
}

TEST(ConfigSpaceIndex, MixedRadixFirstKnobLeastSignificant) {
  ConfigSpace space = small_space();
  EXPECT_EQ(space.size(), 36);
  Config c = space.get(1 + 6 * 1 + 12 * 2);
  EXPECT_EQ(c.choices(), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(c.split("tile"), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(c.annotate("inner"), (std::vector<std::string>{"vec"}));
  EXPECT_EQ(c.knob_int("unroll"), 32);
  EXPECT_EQ(c.to_string(), "tile=[2,6] inner=[\"vec\"] unroll=32");
  for (int64_t i = 0; i < space.size(); ++i) EXPECT_EQ(space.get(i).index(), i);
  EXPECT_NE(error_of([&] { space.get(36); }).find("index 36 is outside the space's [0, 36)"), std::string::npos);
  EXPECT_NE(error_of([&] { space.get(-1); }).find("index -1"), std::string::npos);
}

TEST(ConfigSpaceIndex, EmptySpaceHasOnePoint) {
  ConfigSpace space;
  EXPECT_EQ(space.size(), 1);
  EXPECT_EQ(space.get(0).to_json(), json({{"index", 0}, {"knobs", json::object()}}));
}

TEST(ConfigSpaceIndex, SizeSaturates) {
  ConfigSpace space;
  std::vector<json> values;
  for (int v = 0; v < 1000; ++v) values.emplace_back(v);
  for (int i = 0; i < 7; ++i) space.define_knob("k" + std::to_string(i), values);
  EXPECT_EQ(space.size(), std::numeric_limits<int64_t>::max());  // 1000^7 overflows
  EXPECT_NE(error_of([&] { space.get(0); }).find("cannot be indexed"), std::string::npos);
  std::mt19937_64 rng(1);
  Config c = space.sample(rng);
  EXPECT_TRUE(c.to_json()["index"].is_null());
  EXPECT_EQ(space.from_json(c.to_json()), c);
}

// ---------------------------------------------------------------- constraints, sampling, neighbours

// small_space, where a vectorized inner loop must be at least 4 wide.
ConfigSpace constrained_space() {
  ConfigSpace space = small_space();
  space.add_constraint("a vectorized loop has at least 4 lanes",
                       [](const Config& c) { return c.annotate("inner")[0] != "vec" || c.split("tile")[1] >= 4; });
  return space;
}

TEST(ConfigSpaceConstraints, WhyInvalidSaysWhichRule) {
  ConfigSpace space = constrained_space();
  Config bad = space.from_json({{"knobs", {{"tile", {6, 2}}, {"inner", json::array({"vec"})}, {"unroll", 0}}}});
  EXPECT_FALSE(space.is_valid(bad));
  EXPECT_EQ(space.why_invalid(bad), "a vectorized loop has at least 4 lanes");
  Config good = space.from_json({{"knobs", {{"tile", {3, 4}}, {"inner", json::array({"vec"})}, {"unroll", 0}}}});
  EXPECT_TRUE(space.is_valid(good));
  EXPECT_EQ(space.why_invalid(good), "");
}

TEST(ConfigSpaceSample, DrawsOnlyValidConfigsAndCoversThem) {
  ConfigSpace space = constrained_space();
  int valid = 0;
  for (int64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.get(i));
  EXPECT_EQ(valid, 36 - 3 * 3);  // tile inner 1, 2, 3 with "vec", for each unroll

  std::mt19937_64 rng(42);
  std::map<int64_t, int> seen;
  for (int draw = 0; draw < 2000; ++draw) {
    Config c = space.sample(rng);
    ASSERT_TRUE(space.is_valid(c)) << c.to_string();
    ++seen[c.index()];
  }
  EXPECT_EQ(static_cast<int>(seen.size()), valid);
  // Uniform: 2000 / 27 ~ 74 per point.
  for (const auto& [index, count] : seen) EXPECT_GT(count, 30) << space.get(index).to_string();

  std::mt19937_64 a(7), b(7);
  EXPECT_EQ(space.sample(a), space.sample(b));
}

TEST(ConfigSpaceSample, NoValidConfigIsAUserErrorNamingTheConstraint) {
  ConfigSpace space = small_space();
  space.add_constraint("nothing is allowed", [](const Config&) { return false; });
  std::mt19937_64 rng(0);
  EXPECT_NE(error_of([&] { space.sample(rng); }).find("the constraint 'nothing is allowed' rejected 10000"),
            std::string::npos);
}

TEST(ConfigSpaceNeighbours, ChangeExactlyOneKnobAndStayValid) {
  ConfigSpace space = constrained_space();
  Config c = space.from_json({{"knobs", {{"tile", {3, 4}}, {"inner", json::array({"vec"})}, {"unroll", 8}}}});
  std::vector<Config> ns = space.neighbours(c);
  // tile: 5 others, of which [4,3] [6,2] [12,1] break the rule with "vec"; inner: 1; unroll: 2.
  ASSERT_EQ(ns.size(), 2u + 1u + 2u);
  for (const Config& n : ns) {
    EXPECT_TRUE(space.is_valid(n));
    int differ = 0;
    for (size_t k = 0; k < n.choices().size(); ++k) differ += n.choices()[k] != c.choices()[k];
    EXPECT_EQ(differ, 1) << n.to_string();
  }
  EXPECT_EQ(ns[0].split("tile"), (std::vector<int64_t>{1, 12}));
}

// ---------------------------------------------------------------- JSON

TEST(ConfigSpaceJson, RoundTripsEveryPoint) {
  ConfigSpace space = small_space();
  for (int64_t i = 0; i < space.size(); ++i) {
    Config c = space.get(i);
    json j = c.to_json();
    EXPECT_EQ(j["index"], i);
    EXPECT_EQ(space.from_json(json::parse(j.dump())), c);
  }
  EXPECT_EQ(space.get(7).to_json(),
            json::parse(R"({"index": 7, "knobs": {"tile": [2, 6], "inner": ["vec"], "unroll": 0}})"));
}

TEST(ConfigSpaceJson, MatchesByValueNotByIndex) {
  ConfigSpace a;
  a.define_knob("unroll", {0, 8, 32});
  ConfigSpace b;
  b.define_knob("unroll", {32, 8, 0});
  Config in_a = a.get(2);
  Config in_b = b.from_json(in_a.to_json());
  EXPECT_EQ(in_b.knob_int("unroll"), 32);
  EXPECT_EQ(in_b.index(), 0);
}

TEST(ConfigSpaceJson, ErrorsNameTheKnobAndTheValue) {
  ConfigSpace space = small_space();
  auto read = [&](const char* text) { return error_of([&] { space.from_json(json::parse(text)); }); };
  EXPECT_NE(read(R"({"knobs": {"tile": [2, 6], "inner": ["vec"], "unroll": 0, "order": [0, 1]}})")
                .find("unknown knob 'order'; the space has: tile, inner, unroll"),
            std::string::npos);
  EXPECT_NE(read(R"({"knobs": {"tile": [5, 3], "inner": ["vec"], "unroll": 0}})")
                .find("knob 'tile' has no choice [5,3]; its choices are [1,12], [2,6]"),
            std::string::npos);
  EXPECT_NE(read(R"({"knobs": {"tile": [2, 6], "unroll": 0}})").find("no value for knob 'inner'"), std::string::npos);
  EXPECT_NE(read(R"([1, 2])").find("must be an object"), std::string::npos);
}

}  // namespace
}  // namespace temper::schedule_space
