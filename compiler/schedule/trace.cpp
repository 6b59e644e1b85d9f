// Traces: JSON serialisation, validation and replay.
//
// One table (kKinds) says for each instruction kind its name and the shape of its
// inputs, attributes and outputs; validate() checks any trace against it, so replay can
// read the fields without further checks.
#include <unordered_map>

#include "compiler/ir/printer.h"
#include "compiler/schedule/schedule.h"

namespace temper {
namespace {

// Shapes are small patterns, one letter per element, a letter followed by '*' repeats
// zero or more times, by '?' is optional.
//   inputs/outputs: b block, l loop, e sampled value, x block or loop,
//                   f split factor (integer, null or e)
//   attrs: s string, i integer, B bool, j integer or string, I integer list, F number list
struct KindInfo {
  InstKind kind;
  const char* name;
  const char* inputs;
  const char* attrs;
  const char* outputs;
  bool samples;
};

constexpr KindInfo kKinds[] = {
    {InstKind::GetBlock, "GetBlock", "", "s", "b", false},
    {InstKind::GetLoops, "GetLoops", "b", "", "l*", false},
    {InstKind::SamplePerfectTile, "SamplePerfectTile", "l", "ii", "e*", true},
    {InstKind::SampleCategorical, "SampleCategorical", "", "IF", "e", true},
    {InstKind::Split, "Split", "lfff*", "B", "lll*", false},
    {InstKind::Fuse, "Fuse", "lll*", "", "l", false},
    {InstKind::Reorder, "Reorder", "ll*", "", "", false},
    {InstKind::Parallel, "Parallel", "l", "", "", false},
    {InstKind::Vectorize, "Vectorize", "l", "", "", false},
    {InstKind::Unroll, "Unroll", "l", "", "", false},
    {InstKind::Bind, "Bind", "l", "s", "", false},
    {InstKind::Annotate, "Annotate", "xe?", "sj?", "", false},
    {InstKind::ComputeAt, "ComputeAt", "bl", "", "", false},
    {InstKind::ReverseComputeAt, "ReverseComputeAt", "bl", "", "", false},
    {InstKind::ComputeInline, "ComputeInline", "b", "", "", false},
    {InstKind::CacheRead, "CacheRead", "b", "isI?", "b", false},
    {InstKind::CacheWrite, "CacheWrite", "b", "isI?", "b", false},
    {InstKind::RFactor, "RFactor", "l", "i", "b", false},
    {InstKind::DecomposeReduction, "DecomposeReduction", "bl", "", "b", false},
    {InstKind::Tensorize, "Tensorize", "l", "s", "", false},
};

const KindInfo& info(InstKind k) {
  for (const KindInfo& i : kKinds) {
    if (i.kind == k) return i;
  }
  TEMPER_CHECK(false, "unknown instruction kind ", static_cast<int>(k));
  return kKinds[0];
}

char rv_letter(RVRef::Kind k) {
  return k == RVRef::Kind::Block ? 'b' : k == RVRef::Kind::Loop ? 'l' : 'e';
}

std::string rv_name(const RVRef& r) {
  return rv_letter(r.kind) + std::to_string(r.id);
}

// Matches elements against a shape pattern; elem(letter, index) says whether element
// `index` fits the letter.
template <typename Fits>
bool fits_pattern(const char* pattern, size_t count, Fits fits) {
  size_t n = 0;
  for (const char* p = pattern; *p; ++p) {
    char letter = *p;
    char mod = p[1] == '*' || p[1] == '?' ? *++p : '\0';
    if (mod == '*') {
      while (n < count && fits(letter, n)) ++n;
    } else if (mod == '?') {
      if (n < count && fits(letter, n)) ++n;
    } else {
      if (n >= count || !fits(letter, n)) return false;
      ++n;
    }
  }
  return n == count;
}

bool input_fits(char letter, const InstInput& in) {
  const RVRef* r = std::get_if<RVRef>(&in);
  switch (letter) {
    case 'b':
      return r && r->kind == RVRef::Kind::Block;
    case 'l':
      return r && r->kind == RVRef::Kind::Loop;
    case 'e':
      return r && r->kind == RVRef::Kind::Expr;
    case 'x':
      return r && r->kind != RVRef::Kind::Expr;
    case 'f':
      return !r || r->kind == RVRef::Kind::Expr;
  }
  return false;
}

bool attr_fits(char letter, const nlohmann::json& a) {
  auto all = [&](auto pred) {
    if (!a.is_array()) return false;
    for (const auto& x : a) {
      if (!pred(x)) return false;
    }
    return true;
  };
  switch (letter) {
    case 's':
      return a.is_string();
    case 'i':
      return a.is_number_integer();
    case 'B':
      return a.is_boolean();
    case 'j':
      return a.is_number_integer() || a.is_string();
    case 'I':
      return all([](const nlohmann::json& x) { return x.is_number_integer(); });
    case 'F':
      return all([](const nlohmann::json& x) { return x.is_number(); });
  }
  return false;
}

// A cache stage's layout attribute (absent: the buffer's own order).
std::vector<int> layout_attr(const nlohmann::json& attrs) {
  return attrs.size() > 2 ? attrs[2].get<std::vector<int>>() : std::vector<int>{};
}

std::string where(size_t index, InstKind k) {
  return str("instruction ", index, " (", info(k).name, ")");
}

// Checks every instruction against kKinds and that each RV is defined once, before it
// is used, with the kind its uses expect.
void validate(const std::vector<Instruction>& insts) {
  std::unordered_map<int, RVRef::Kind> defined;
  for (size_t i = 0; i < insts.size(); ++i) {
    const Instruction& inst = insts[i];
    const KindInfo& k = info(inst.kind);
    for (const InstInput& in : inst.inputs) {
      const RVRef* r = std::get_if<RVRef>(&in);
      if (!r) continue;
      auto it = defined.find(r->id);
      if (it == defined.end() || it->second != r->kind) {
        throw UserError(str("malformed trace: ", where(i, inst.kind), ": input ", rv_name(*r),
                            " is not defined by an earlier instruction"));
      }
    }
    if (!fits_pattern(k.inputs, inst.inputs.size(), [&](char c, size_t n) { return input_fits(c, inst.inputs[n]); })) {
      throw UserError(str("malformed trace: ", where(i, inst.kind), ": the inputs do not have the form '", k.inputs,
                          "' (b block, l loop, e sampled value, x block or loop, f factor: integer, null or e)"));
    }
    if (!inst.attrs.is_array() ||
        !fits_pattern(k.attrs, inst.attrs.size(), [&](char c, size_t n) { return attr_fits(c, inst.attrs[n]); })) {
      throw UserError(str("malformed trace: ", where(i, inst.kind), ": the attrs ", inst.attrs.dump(),
                          " do not have the form '", k.attrs,
                          "' (s string, i integer, B bool, j integer or string, I integer list, F number list)"));
    }
    if (inst.kind == InstKind::Annotate && (inst.inputs.size() == 2) != (inst.attrs.size() == 1)) {
      throw UserError(str("malformed trace: ", where(i, inst.kind),
                          ": give the value either as a sampled input or as the second attr"));
    }
    if (!fits_pattern(k.outputs, inst.outputs.size(),
                      [&](char c, size_t n) { return input_fits(c, InstInput(inst.outputs[n])); })) {
      throw UserError(
          str("malformed trace: ", where(i, inst.kind), ": the outputs do not have the form '", k.outputs, "'"));
    }
    for (const RVRef& r : inst.outputs) {
      if (!defined.emplace(r.id, r.kind).second) {
        throw UserError(str("malformed trace: ", where(i, inst.kind), ": output ", rv_name(r), " reuses id ", r.id,
                            " of an earlier random variable"));
      }
    }
    if (k.samples != inst.decision.has_value()) {
      throw UserError(
          str("malformed trace: ", where(i, inst.kind),
              k.samples ? ": the field 'decision' is missing" : ": only sampling instructions have a 'decision'"));
    }
    if (inst.kind == InstKind::SampleCategorical && inst.decision->size() != 1) {
      throw UserError(str("malformed trace: ", where(i, inst.kind), ": the decision must be one index"));
    }
    if (inst.kind == InstKind::SamplePerfectTile && inst.decision->size() != inst.outputs.size()) {
      throw UserError(str("malformed trace: ", where(i, inst.kind), ": the decision has ", inst.decision->size(),
                          " factors for ", inst.outputs.size(), " outputs"));
    }
  }
}

// The decision replay_with takes for its k-th sampling instruction: the override when
// one is given (an empty optional there means "draw anew"), else the trace's own.
std::optional<std::vector<int64_t>> decision_for(const std::vector<std::optional<std::vector<int64_t>>>& overrides,
                                                 size_t k, const std::optional<std::vector<int64_t>>& own) {
  return k < overrides.size() ? overrides[k] : own;
}

RVRef parse_rv(const std::string& s, const std::string& field) {
  RVRef::Kind kind;
  if (s.size() >= 2 && s[0] == 'b') {
    kind = RVRef::Kind::Block;
  } else if (s.size() >= 2 && s[0] == 'l') {
    kind = RVRef::Kind::Loop;
  } else if (s.size() >= 2 && s[0] == 'e') {
    kind = RVRef::Kind::Expr;
  } else {
    throw UserError(str(field, " \"", s, "\" is not a random variable (b<id>, l<id> or e<id>)"));
  }
  int64_t id = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || id > 100000000) {
      throw UserError(str(field, " \"", s, "\" is not a random variable (b<id>, l<id> or e<id>)"));
    }
    id = id * 10 + (s[i] - '0');
  }
  return RVRef{kind, static_cast<int>(id)};
}

const nlohmann::json& field(const nlohmann::json& inst, const char* name, const std::string& where_) {
  if (!inst.contains(name)) throw UserError(str(where_, ": the field '", name, "' is missing"));
  const nlohmann::json& f = inst.at(name);
  if (!f.is_array()) throw UserError(str(where_, ": the field '", name, "' must be an array"));
  return f;
}

}  // namespace

const char* inst_kind_name(InstKind k) {
  return info(k).name;
}

nlohmann::json Trace::to_json() const {
  nlohmann::json insts = nlohmann::json::array();
  for (const Instruction& inst : insts_) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const InstInput& in : inst.inputs) {
      if (auto* r = std::get_if<RVRef>(&in)) {
        inputs.push_back(rv_name(*r));
      } else if (auto* c = std::get_if<int64_t>(&in)) {
        inputs.push_back(*c);
      } else {
        inputs.push_back(nullptr);
      }
    }
    nlohmann::json outputs = nlohmann::json::array();
    for (const RVRef& r : inst.outputs) outputs.push_back(rv_name(r));
    nlohmann::json j = {
        {"kind", inst_kind_name(inst.kind)}, {"inputs", inputs}, {"attrs", inst.attrs}, {"outputs", outputs}};
    if (inst.decision) j["decision"] = *inst.decision;
    insts.push_back(std::move(j));
  }
  return nlohmann::json{{"version", 1}, {"instructions", insts}};
}

Trace Trace::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw UserError("malformed trace: expected a JSON object with 'version' and 'instructions'");
  if (!j.contains("version") || j.at("version") != 1) {
    throw UserError("malformed trace: the field 'version' is missing or not 1");
  }
  if (!j.contains("instructions") || !j.at("instructions").is_array()) {
    throw UserError("malformed trace: the field 'instructions' is missing or not an array");
  }
  Trace t;
  const nlohmann::json& list = j.at("instructions");
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& ji = list[i];
    std::string at = str("malformed trace: instruction ", i);
    if (!ji.is_object() || !ji.contains("kind") || !ji.at("kind").is_string()) {
      throw UserError(str(at, ": the field 'kind' is missing or not a string"));
    }
    const std::string& kind_name = ji.at("kind").get_ref<const std::string&>();
    const KindInfo* k = nullptr;
    for (const KindInfo& ki : kKinds) {
      if (kind_name == ki.name) k = &ki;
    }
    if (!k) throw UserError(str(at, ": unknown instruction kind '", kind_name, "'"));
    at += str(" (", kind_name, ")");
    Instruction inst;
    inst.kind = k->kind;
    for (const nlohmann::json& in : field(ji, "inputs", at)) {
      if (in.is_null()) {
        inst.inputs.emplace_back(std::monostate{});
      } else if (in.is_number_integer()) {
        inst.inputs.emplace_back(in.get<int64_t>());
      } else if (in.is_string()) {
        inst.inputs.emplace_back(parse_rv(in.get<std::string>(), at + ": input"));
      } else {
        throw UserError(str(at, ": input ", in.dump(), " is neither a random variable, an integer nor null"));
      }
    }
    inst.attrs = field(ji, "attrs", at);
    for (const nlohmann::json& out : field(ji, "outputs", at)) {
      if (!out.is_string()) throw UserError(str(at, ": output ", out.dump(), " is not a random variable"));
      inst.outputs.push_back(parse_rv(out.get<std::string>(), at + ": output"));
    }
    if (ji.contains("decision")) {
      const nlohmann::json& d = ji.at("decision");
      if (!d.is_array()) throw UserError(str(at, ": the field 'decision' must be an array of integers"));
      std::vector<int64_t> values;
      for (const nlohmann::json& x : d) {
        if (!x.is_number_integer()) throw UserError(str(at, ": the field 'decision' must be an array of integers"));
        values.push_back(x.get<int64_t>());
      }
      inst.decision = values;
    }
    t.insts_.push_back(std::move(inst));
  }
  validate(t.insts_);
  return t;
}

Trace Trace::with_decision(size_t index, std::vector<int64_t> decision) const {
  if (index >= insts_.size()) {
    throw UserError(str("with_decision: the trace has ", insts_.size(), " instructions, no instruction ", index));
  }
  if (!info(insts_[index].kind).samples) {
    throw UserError(str("with_decision: ", where(index, insts_[index].kind), " samples nothing"));
  }
  Trace t = *this;
  t.insts_[index].decision = std::move(decision);
  return t;
}

Schedule Trace::replay(const PrimFunc& f) const {
  return replay_with(f, {}, 0);
}

Schedule Trace::replay_with(const PrimFunc& f, const std::vector<std::optional<std::vector<int64_t>>>& decisions,
                            uint64_t seed) const {
  validate(insts_);
  Schedule s(f, seed);
  std::unordered_map<int, int> ids;  // RV id in this trace -> RV id in s
  size_t sampled = 0;                // sampling instructions so far
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Instruction& inst = insts_[i];
    auto id = [&](size_t k) { return ids.at(std::get<RVRef>(inst.inputs[k]).id); };
    auto loop = [&](size_t k) { return LoopRV{id(k)}; };
    auto block = [&](size_t k) { return BlockRV{id(k)}; };
    auto loops_from = [&](size_t first) {
      std::vector<LoopRV> out;
      for (size_t k = first; k < inst.inputs.size(); ++k) out.push_back(loop(k));
      return out;
    };
    const nlohmann::json& a = inst.attrs;
    std::vector<int> outputs;
    auto out = [&](auto rvs) {
      for (const auto& rv : rvs) outputs.push_back(rv.id);
    };
    try {
      switch (inst.kind) {
        case InstKind::GetBlock:
          out(std::vector{s.get_block(a[0].get<std::string>())});
          break;
        case InstKind::GetLoops:
          out(s.get_loops(block(0)));
          break;
        case InstKind::SamplePerfectTile: {
          // An override the loop cannot take (sample_perfect_tile refuses it before
          // changing anything) is drawn anew.
          std::optional<std::vector<int64_t>> decision = decision_for(decisions, sampled++, inst.decision);
          try {
            out(s.sample_perfect_tile(loop(0), a[0].get<int>(), a[1].get<int>(), decision));
          } catch (const ScheduleError&) {
            if (decision == inst.decision) throw;
            out(s.sample_perfect_tile(loop(0), a[0].get<int>(), a[1].get<int>(), std::nullopt));
          }
          break;
        }
        case InstKind::SampleCategorical: {
          std::vector<int64_t> values = a[0].get<std::vector<int64_t>>();
          std::optional<std::vector<int64_t>> decision = decision_for(decisions, sampled++, inst.decision);
          std::optional<int> index;
          if (decision && decision->size() == 1 && decision->at(0) >= 0 &&
              decision->at(0) < static_cast<int64_t>(values.size())) {
            index = static_cast<int>(decision->at(0));
          }
          out(std::vector{s.sample_categorical(values, a[1].get<std::vector<double>>(), index)});
          break;
        }
        case InstKind::Split: {
          std::vector<SplitFactor> factors;
          for (size_t k = 1; k < inst.inputs.size(); ++k) {
            const InstInput& in = inst.inputs[k];
            if (auto* c = std::get_if<int64_t>(&in)) {
              factors.emplace_back(*c);
            } else if (std::holds_alternative<RVRef>(in)) {
              factors.emplace_back(ExprRV{id(k)});
            } else {
              factors.emplace_back(std::nullopt);
            }
          }
          out(s.split(loop(0), factors, a[0].get<bool>()));
          break;
        }
        case InstKind::Fuse:
          out(std::vector{s.fuse(loops_from(0))});
          break;
        case InstKind::Reorder:
          s.reorder(loops_from(0));
          break;
        case InstKind::Parallel:
          s.parallel(loop(0));
          break;
        case InstKind::Vectorize:
          s.vectorize(loop(0));
          break;
        case InstKind::Unroll:
          s.unroll(loop(0));
          break;
        case InstKind::Bind:
          s.bind(loop(0), a[0].get<std::string>());
          break;
        case InstKind::Annotate: {
          const std::string& key = a[0].get_ref<const std::string&>();
          bool on_loop = std::get<RVRef>(inst.inputs[0]).kind == RVRef::Kind::Loop;
          if (inst.inputs.size() == 2) {
            ExprRV value{id(1)};
            on_loop ? s.annotate(loop(0), key, value) : s.annotate(block(0), key, value);
          } else {
            AnnotationValue value =
                a[1].is_string() ? AnnotationValue(a[1].get<std::string>()) : AnnotationValue(a[1].get<int64_t>());
            on_loop ? s.annotate(loop(0), key, value) : s.annotate(block(0), key, value);
          }
          break;
        }
        case InstKind::ComputeAt:
          s.compute_at(block(0), loop(1));
          break;
        case InstKind::ReverseComputeAt:
          s.reverse_compute_at(block(0), loop(1));
          break;
        case InstKind::ComputeInline:
          s.compute_inline(block(0));
          break;
        case InstKind::CacheRead:
          out(std::vector{s.cache_read(block(0), a[0].get<int>(), a[1].get<std::string>(), layout_attr(a))});
          break;
        case InstKind::CacheWrite:
          out(std::vector{s.cache_write(block(0), a[0].get<int>(), a[1].get<std::string>(), layout_attr(a))});
          break;
        case InstKind::RFactor:
          out(std::vector{s.rfactor(loop(0), a[0].get<int>())});
          break;
        case InstKind::DecomposeReduction:
          out(std::vector{s.decompose_reduction(block(0), loop(1))});
          break;
        case InstKind::Tensorize:
          s.tensorize(loop(0), a[0].get<std::string>());
          break;
      }
    } catch (const ScheduleError& e) {
      throw ScheduleError(str("replaying trace ", where(i, inst.kind), ": ", e.what()));
    }
    if (outputs.size() != inst.outputs.size()) {
      throw ScheduleError(str("replaying trace ", where(i, inst.kind), ": it produced ", outputs.size(),
                              " random variables where the trace has ", inst.outputs.size(),
                              "; the trace was recorded on a different workload"));
    }
    for (size_t k = 0; k < outputs.size(); ++k) ids[inst.outputs[k].id] = outputs[k];
  }
  return s;
}

}  // namespace temper
