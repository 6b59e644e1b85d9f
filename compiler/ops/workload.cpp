#include "compiler/ops/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "compiler/ir/text.h"
#include "compiler/ops/op_table.h"

namespace temper::ops {

namespace {

std::string trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\n");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\n");
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = s.find(sep, start)) != std::string::npos; start = pos + 1) {
    parts.push_back(s.substr(start, pos - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::string valid_keys(const OpSpec& spec) {
  std::vector<std::string> keys;
  for (const ParamSpec& p : spec.params) keys.push_back(p.key);
  return join(keys, ", ");
}

// An integer written with an optional '-' and decimal digits, nothing else.
std::optional<int64_t> parse_integer(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::vector<int64_t>> parse_integer_list(const std::string& s) {
  std::vector<int64_t> values;
  for (const std::string& part : split(s, 'x')) {
    std::optional<int64_t> v = parse_integer(part);
    if (!v) return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

std::string list_str(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(std::to_string(v));
  return join(parts, "x");
}

// The value of one parameter in canonical form; UserError saying what is accepted.
std::string canonical_value(const std::string& op, const ParamSpec& spec, const std::string& value) {
  const std::string where = str(op, ": ", spec.key, "=", value);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  auto check_range = [&](int64_t v, bool allow_zero) {
    if (v < 0 || (v == 0 && !allow_zero)) {
      throw UserError(str(where, " must be ", allow_zero ? "non-negative" : "positive"));
    }
    if (v > kMax) throw UserError(str(where, " is too large (at most ", kMax, ")"));
  };
  switch (spec.kind) {
    case ParamKind::Positive:
    case ParamKind::NonNegative: {
      std::optional<int64_t> v = parse_integer(value);
      if (!v) throw UserError(str(where, " is not an integer"));
      check_range(*v, spec.kind == ParamKind::NonNegative);
      return std::to_string(*v);
    }
    case ParamKind::Bool:
      if (value == "1" || value == "true") return "1";
      if (value == "0" || value == "false") return "0";
      throw UserError(str(where, " is not a boolean; use 0 or 1 (or false, true)"));
    case ParamKind::Float: {
      double v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v)) {
        throw UserError(str(where, " is not a finite number"));
      }
      char buf[64];
      auto [out_end, out_ec] = std::to_chars(buf, buf + sizeof(buf), v);
      return std::string(buf, out_end);
    }
    case ParamKind::Choice:
      if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
        throw UserError(str(where, " is not accepted; choose one of ", join(spec.choices, ", ")));
      }
      return value;
    case ParamKind::Shape:
    case ParamKind::Indices:
    case ParamKind::Pair:
    case ParamKind::Pads: {
      std::optional<std::vector<int64_t>> values = parse_integer_list(value);
      if (!values) throw UserError(str(where, " is not an integer or a list of integers joined by 'x' (like 2x3)"));
      bool allow_zero = spec.kind == ParamKind::Indices || spec.kind == ParamKind::Pads;
      for (int64_t v : *values) check_range(v, allow_zero);
      std::vector<int64_t>& l = *values;
      if (spec.kind == ParamKind::Pair) {
        if (l.size() > 2) {
          throw UserError(str(where, " has ", l.size(), " values; give 1 (both dimensions) or 2 (height x width)"));
        }
        if (l.size() == 2 && l[0] == l[1]) l.pop_back();
      }
      if (spec.kind == ParamKind::Pads) {
        if (l.size() != 1 && l.size() != 2 && l.size() != 4) {
          throw UserError(str(where, " has ", l.size(),
                              " values; give 1 (all sides), 2 (height x width) or 4 (top x left x bottom x right)"));
        }
        // The shortest list that says the same: TxLxBxR -> HxW when symmetric -> P when all equal.
        if (l.size() == 4 && l[0] == l[2] && l[1] == l[3]) l.resize(2);
        if (l.size() == 2 && l[0] == l[1]) l.resize(1);
      }
      return list_str(l);
    }
  }
  return value;
}

// How op_usage shows the value of a required key.
const char* placeholder(ParamKind kind) {
  switch (kind) {
    case ParamKind::Positive:
    case ParamKind::NonNegative:
      return "<int>";
    case ParamKind::Bool:
      return "<0|1>";
    case ParamKind::Float:
      return "<number>";
    case ParamKind::Choice:
      return "<name>";
    case ParamKind::Shape:
      return "<d0xd1x...>";
    case ParamKind::Indices:
      return "<i0xi1x...>";
    case ParamKind::Pair:
      return "<n|HxW>";
    case ParamKind::Pads:
      return "<p|HxW|TxLxBxR>";
  }
  return "<value>";
}

}  // namespace

const OpSpec& find_op_spec(const std::string& op) {
  for (const OpSpec& spec : op_specs()) {
    if (spec.op == op) return spec;
  }
  throw UserError(str("unknown op '", op, "'; known ops: ", join(known_ops(), ", ")));
}

Workload Workload::make(const std::string& op, const std::vector<std::pair<std::string, std::string>>& params) {
  const OpSpec& spec = find_op_spec(op);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& key = params[i].first;
    if (std::none_of(spec.params.begin(), spec.params.end(), [&](const ParamSpec& p) { return p.key == key; })) {
      throw UserError(str(op, " has no parameter '", key, "'; valid keys: ", valid_keys(spec)));
    }
    for (size_t j = 0; j < i; ++j) {
      if (params[j].first == key) throw UserError(str(op, ": parameter ", key, " is given twice"));
    }
  }
  Workload w;
  w.op = op;
  std::vector<std::string> missing;
  for (const ParamSpec& p : spec.params) {
    auto given = std::find_if(params.begin(), params.end(), [&](const auto& kv) { return kv.first == p.key; });
    if (given != params.end()) {
      w.params.emplace_back(p.key, canonical_value(op, p, given->second));
    } else if (p.default_value) {
      w.params.emplace_back(p.key, canonical_value(op, p, *p.default_value));
    } else {
      missing.push_back(p.key);
    }
  }
  if (!missing.empty()) {
    throw UserError(str(op, ": missing required parameter", missing.size() > 1 ? "s " : " ", join(missing, ", "),
                        "; usage: ", op_usage(op)));
  }
  return w;
}

Workload Workload::parse(const std::string& text) {
  const std::string example = "; write op:key=value,... as in matmul:M=64,N=64,K=64";
  size_t colon = text.find(':');
  if (colon == std::string::npos) throw UserError(str("workload '", text, "' has no ':' after the op name", example));
  std::string op = trim(text.substr(0, colon));
  if (op.empty()) throw UserError(str("workload '", text, "' has no op name before ':'", example));
  find_op_spec(op);
  std::vector<std::pair<std::string, std::string>> params;
  std::string body = trim(text.substr(colon + 1));
  if (!body.empty()) {
    for (const std::string& raw : split(body, ',')) {
      std::string item = trim(raw);
      if (item.empty()) throw UserError(str("workload '", text, "' has an empty parameter between commas", example));
      size_t eq = item.find('=');
      if (eq == std::string::npos) {
        throw UserError(str("workload '", text, "': parameter '", item, "' has no '='; write key=value"));
      }
      if (item.find('=', eq + 1) != std::string::npos) {
        throw UserError(str("workload '", text, "': parameter '", item, "' has more than one '='"));
      }
      std::string key = trim(item.substr(0, eq));
      std::string value = trim(item.substr(eq + 1));
      if (key.empty()) throw UserError(str("workload '", text, "': parameter '", item, "' has an empty key"));
      if (value.empty()) throw UserError(str("workload '", text, "': parameter ", key, " has an empty value"));
      params.emplace_back(key, value);
    }
  }
  return make(op, params);
}

std::string Workload::to_string() const {
  std::vector<std::string> items;
  for (const auto& [key, value] : params) items.push_back(key + "=" + value);
  return op + ":" + join(items, ",");
}

const std::string& Workload::get(const std::string& key) const {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  throw UserError(str("workload ", to_string(), " has no parameter '", key, "'"));
}

int64_t Workload::get_int(const std::string& key) const {
  std::optional<int64_t> v = parse_integer(get(key));
  if (!v) throw UserError(str(op, ": ", key, "=", get(key), " is not a single integer"));
  return *v;
}

std::vector<int64_t> Workload::get_ints(const std::string& key) const {
  std::optional<std::vector<int64_t>> v = parse_integer_list(get(key));
  if (!v) throw UserError(str(op, ": ", key, "=", get(key), " is not a list of integers"));
  return *v;
}

double Workload::get_float(const std::string& key) const {
  const std::string& s = get(key);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) throw UserError(str(op, ": ", key, "=", s, " is not a number"));
  return v;
}

bool Workload::get_bool(const std::string& key) const {
  const std::string& s = get(key);
  if (s == "1" || s == "true") return true;
  if (s == "0" || s == "false") return false;
  throw UserError(str(op, ": ", key, "=", s, " is not a boolean"));
}

DataType Workload::dtype() const {
  return DataType::parse(get("dtype"));
}

OpInstance instantiate(const Workload& workload) {
  const OpSpec& spec = find_op_spec(workload.op);
  // Canonicalise first: a hand-built Workload gets the same checks and defaults as a parsed one.
  return spec.instantiate(Workload::make(workload.op, workload.params));
}

std::vector<std::string> known_ops() {
  std::vector<std::string> ops;
  for (const OpSpec& spec : op_specs()) ops.push_back(spec.op);
  return ops;
}

const std::string& op_doc(const std::string& op) {
  return find_op_spec(op).doc;
}

std::string op_usage(const std::string& op) {
  const OpSpec& spec = find_op_spec(op);
  std::vector<std::string> required;
  std::vector<std::string> optional;
  for (const ParamSpec& p : spec.params) {
    if (!p.default_value) {
      required.push_back(p.key + "=" + placeholder(p.kind));
    } else if (p.kind == ParamKind::Choice) {
      // The default first, then the alternatives.
      std::vector<std::string> choices = {*p.default_value};
      for (const std::string& c : p.choices) {
        if (c != *p.default_value) choices.push_back(c);
      }
      optional.push_back(p.key + "=" + join(choices, "|"));
    } else {
      optional.push_back(p.key + "=" + *p.default_value);
    }
  }
  required.insert(required.end(), optional.begin(), optional.end());
  return op + ":" + join(required, ",");
}

}  // namespace temper::ops
