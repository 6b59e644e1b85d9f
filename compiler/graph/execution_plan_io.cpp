// save_execution_plan / load_execution_plan: the files execution_plan.h describes.
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/codegen/llvm/host_cpu.h"
#include "compiler/graph/execution_plan.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/shape.h"
#include "compiler/runtime/file_io.h"

namespace temper::graph {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "temper-execution-plan";
// 2: the weights checksum is the standard 64-bit FNV-1a (version 1 used another offset basis).
constexpr int kVersion = 2;
constexpr int64_t kAlignment = 64;

const char* kind_name(PlannedArray::Kind kind) {
  switch (kind) {
    case PlannedArray::Kind::Input:
      return "input";
    case PlannedArray::Kind::Constant:
      return "constant";
    case PlannedArray::Kind::Output:
      return "output";
    case PlannedArray::Kind::Intermediate:
      return "intermediate";
  }
  return "?";
}

PlannedArray::Kind parse_kind(const std::string& name) {
  for (auto kind : {PlannedArray::Kind::Input, PlannedArray::Kind::Constant, PlannedArray::Kind::Output,
                    PlannedArray::Kind::Intermediate}) {
    if (name == kind_name(kind)) return kind;
  }
  throw json::other_error::create(501, str("unknown array kind '", name, "'"), nullptr);
}

std::string rebuild_hint() {
  return "rebuild the model with `temper build`";
}

// The first floating-point number anywhere in `value`, or null.
const json* find_float(const json& value) {
  if (value.is_number_float()) return &value;
  if (value.is_structured()) {
    for (const json& item : value) {
      if (const json* found = find_float(item)) return found;
    }
  }
  return nullptr;
}

}  // namespace

void save_execution_plan(const ExecutionPlan& plan, const std::string& plan_path, const std::string& weights_path) {
  std::string weights;
  json arrays = json::array();
  for (const PlannedArray& a : plan.arrays) {
    json entry = {
        {"name", a.name}, {"shape", a.type.shape}, {"dtype", a.type.dtype.to_string()}, {"kind", kind_name(a.kind)}};
    if (a.kind == PlannedArray::Kind::Intermediate) entry["storage"] = a.storage;
    if (a.kind == PlannedArray::Kind::Constant) {
      weights.resize((weights.size() + kAlignment - 1) / kAlignment * kAlignment, '\0');
      entry["offset"] = weights.size();
      weights.append(static_cast<const char*>(a.data.data()), static_cast<size_t>(a.data.nbytes()));
    }
    arrays.push_back(std::move(entry));
  }
  json calls = json::array();
  for (const KernelCall& c : plan.calls) {
    calls.push_back({{"function", c.function}, {"args", c.args}, {"num_inputs", c.num_inputs}, {"shapes", c.shapes}});
    if (!c.workload.empty()) calls.back()["workload"] = c.workload;
    if (c.layout_conversion) calls.back()["layout_conversion"] = true;
  }
  json file = {{"format", kFormat},
               {"version", kVersion},
               {"graph", plan.graph_name},
               {"target", plan.target},
               {"cpu", {{"name", plan.cpu_name}, {"features", plan.cpu_features}}},
               {"tasks", plan.tasks},
               {"layout", {{"name", plan.layout}, {"conversions", plan.layout_conversions}}},
               {"arrays", std::move(arrays)},
               {"inputs", plan.inputs},
               {"outputs", plan.outputs},
               {"calls", std::move(calls)},
               {"storage_bytes", plan.storage_bytes},
               {"weights", {{"bytes", weights.size()}, {"fnv1a", fnv1a(weights)}}}};
  write_file_atomically(weights_path, weights, "model weights");
  write_file_atomically(plan_path, file.dump(1) + "\n", "model plan");
}

ExecutionPlan load_execution_plan(const std::string& plan_path, const std::string& weights_path) {
  std::string text = read_file(plan_path, "model plan");
  json file;
  try {
    file = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large
    throw UserError(str("model plan '", plan_path, "' is not valid JSON (truncated or damaged?): ", e.what(), "; ",
                        rebuild_hint()));
  }
  if (!file.is_object() || !file.contains("format") || file["format"] != kFormat) {
    throw UserError(str("'", plan_path, "' is not a Temper model plan (no \"format\": \"", kFormat, "\")"));
  }
  if (!file.contains("version") || file["version"] != kVersion) {
    throw UserError(str("model plan '", plan_path, "' has version ", file.contains("version") ? file["version"].dump() : "none",
                        "; this Temper reads version ", kVersion, ": ", rebuild_hint()));
  }
  // A plan holds strings and integers only; a float where an integer belongs would be
  // converted with undefined behaviour by nlohmann's get<int>.
  if (const json* number = find_float(file)) {
    throw UserError(str("model plan '", plan_path, "' is damaged: it holds the number ", number->dump(),
                        " where only integers belong; ", rebuild_hint()));
  }
  std::string weights = read_file(weights_path, "model weights");
  ExecutionPlan plan;
  try {
    const json& w = file.at("weights");
    if (w.at("bytes").get<uint64_t>() != weights.size() || w.at("fnv1a").get<uint64_t>() != fnv1a(weights)) {
      throw UserError(str("model weights '", weights_path, "' do not match the plan '", plan_path, "' (",
                          weights.size(), " bytes, the plan expects ", w.at("bytes").get<uint64_t>(),
                          "; truncated, damaged or from another build): ", rebuild_hint()));
    }
    plan.graph_name = file.at("graph").get<std::string>();
    plan.target = file.at("target").get<std::string>();
    plan.cpu_name = file.at("cpu").at("name").get<std::string>();
    plan.cpu_features = file.at("cpu").at("features").get<std::string>();
    plan.tasks = file.at("tasks").get<int>();
    if (file.contains("layout")) {
      plan.layout = file.at("layout").at("name").get<std::string>();
      plan.layout_conversions = file.at("layout").at("conversions").get<std::vector<std::string>>();
    }
    for (const json& entry : file.at("arrays")) {
      PlannedArray a;
      a.name = entry.at("name").get<std::string>();
      a.type = TensorType{entry.at("shape").get<std::vector<int64_t>>(),
                          DataType::parse(entry.at("dtype").get<std::string>())};
      a.kind = parse_kind(entry.at("kind").get<std::string>());
      if (a.kind == PlannedArray::Kind::Intermediate) a.storage = entry.at("storage").get<int>();
      if (a.kind == PlannedArray::Kind::Constant) {
        uint64_t offset = entry.at("offset").get<uint64_t>();
        a.data = NDArray::empty(a.type.shape, a.type.dtype);
        uint64_t bytes = static_cast<uint64_t>(a.data.nbytes());
        if (offset > weights.size() || bytes > weights.size() - offset) {
          throw UserError(str("model plan '", plan_path, "': constant '", a.name,
                              "' lies outside the weights file: ", rebuild_hint()));
        }
        std::memcpy(a.data.data(), weights.data() + offset, bytes);
      }
      plan.arrays.push_back(std::move(a));
    }
    plan.inputs = file.at("inputs").get<std::vector<int>>();
    plan.outputs = file.at("outputs").get<std::vector<int>>();
    for (const json& entry : file.at("calls")) {
      KernelCall c;
      c.function = entry.at("function").get<std::string>();
      c.args = entry.at("args").get<std::vector<int>>();
      c.num_inputs = entry.at("num_inputs").get<int>();
      c.shapes = entry.at("shapes").get<std::vector<std::vector<int64_t>>>();
      c.workload = entry.value("workload", std::string());
      c.layout_conversion = entry.value("layout_conversion", false);
      plan.calls.push_back(std::move(c));
    }
    plan.storage_bytes = file.at("storage_bytes").get<std::vector<int64_t>>();
  } catch (const json::exception& e) {
    throw UserError(str("model plan '", plan_path, "' is damaged: ", e.what(), "; ", rebuild_hint()));
  }
  // Every index the run follows, checked once here.
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) throw UserError(str("model plan '", plan_path, "' is damaged: ", what, "; ", rebuild_hint()));
  };
  int num_arrays = static_cast<int>(plan.arrays.size());
  auto valid = [&](int id) { return id >= 0 && id < num_arrays; };
  for (int id : plan.inputs) check(valid(id), str("input ", id, " names no array"));
  for (int id : plan.outputs) check(valid(id), str("output ", id, " names no array"));
  for (const KernelCall& c : plan.calls) {
    check(c.args.size() == c.shapes.size() && c.num_inputs >= 0 && c.num_inputs <= static_cast<int>(c.args.size()),
          str("call of ", c.function, " has mismatched arguments"));
    for (size_t i = 0; i < c.args.size(); ++i) {
      check(valid(c.args[i]), str("call of ", c.function, " passes array ", c.args[i], ", which does not exist"));
      int64_t elements = ops::num_elements(c.shapes[i]);
      const PlannedArray& a = plan.arrays[c.args[i]];
      check(elements == a.type.size(), str("call of ", c.function, " views '", a.name, "' with another element count"));
      check(a.kind != PlannedArray::Kind::Intermediate ||
                (a.storage >= 0 && a.storage < static_cast<int>(plan.storage_bytes.size()) &&
                 plan.storage_bytes[a.storage] >= a.type.size() * a.type.dtype.bytes()),
            str("array '", a.name, "' has no storage block that holds it"));
    }
  }
  // Code built for the building machine's features would stop with an illegal instruction.
  std::vector<std::string> missing;
  std::stringstream features(plan.cpu_features);
  for (std::string feature; std::getline(features, feature, ',');) {
    if (feature.size() > 1 && feature[0] == '+' && !host_has_feature(feature.substr(1))) {
      missing.push_back(feature.substr(1));
    }
  }
  if (!missing.empty()) {
    throw UserError(str("model plan '", plan_path, "' was built on a ", plan.cpu_name, " for ", plan.target,
                        ", whose code may use CPU features this machine (", host_cpu_name(),
                        ") lacks: ", join(missing, ", "), "; rebuild the model here with `temper build`"));
  }
  return plan;
}

}  // namespace temper::graph
