#include "measure/worker_protocol.h"

#include <nlohmann/json.hpp>

#include "compiler/ir/error.h"

namespace temper::measure {
namespace {

// what: "request", "reply"; worker: "measure", "compile".
nlohmann::json parse_object(const std::string& line, const char* what, const char* worker = "measure") {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw UserError(str("malformed ", worker, " ", what, " (not a JSON object): ", line));
  return j;
}

template <typename T>
T field(const nlohmann::json& j, const char* key, const char* what, const char* worker = "measure") {
  auto it = j.find(key);
  if (it == j.end()) throw UserError(str(worker, " ", what, " has no \"", key, "\": ", j.dump()));
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UserError(str(worker, " ", what, " has a \"", key, "\" of the wrong type: ", j.dump()));
  }
}

// A message may quote bytes that are not UTF-8 (a loader's or the code's words).
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

MeasureError parse_error_name(const std::string& name) {
  for (MeasureError e :
       {MeasureError::None, MeasureError::CompileError, MeasureError::CompileTimeout, MeasureError::RuntimeError,
        MeasureError::RunTimeout, MeasureError::WrongResult, MeasureError::InstantiationError}) {
    if (name == error_name(e)) return e;
  }
  throw UserError(str("unknown measurement error '", name, "'"));
}

std::string encode_request(const WorkerRequest& r) {
  nlohmann::json j = {{"workload", r.workload},
                      {"target", r.target},
                      {"library", r.library},
                      {"function", r.function},
                      {"number", r.number},
                      {"repeat", r.repeat},
                      {"min_repeat_ms", r.min_repeat_ms},
                      {"cooldown_ms", r.cooldown_ms},
                      {"flush_cache", r.flush_cache},
                      {"cold_caches", r.cold_caches},
                      {"threads", r.threads},
                      {"token", r.token},
                      {"memory_limit_mb", r.memory_limit_mb},
                      {"cpu_time_limit_s", r.cpu_time_limit_s}};
  if (!r.pack_function.empty()) {
    j["pack_function"] = r.pack_function;
    j["packed_input"] = r.packed_input;
    j["packed_shape"] = r.packed_shape;
  }
  return j.dump();
}

WorkerRequest decode_request(const std::string& line) {
  nlohmann::json j = parse_object(line, "request");
  WorkerRequest r;
  r.workload = field<std::string>(j, "workload", "request");
  r.target = field<std::string>(j, "target", "request");
  r.library = field<std::string>(j, "library", "request");
  r.function = field<std::string>(j, "function", "request");
  r.number = field<int>(j, "number", "request");
  r.repeat = field<int>(j, "repeat", "request");
  r.min_repeat_ms = field<double>(j, "min_repeat_ms", "request");
  r.cooldown_ms = field<double>(j, "cooldown_ms", "request");
  r.flush_cache = field<bool>(j, "flush_cache", "request");
  r.cold_caches = field<bool>(j, "cold_caches", "request");
  r.threads = field<int>(j, "threads", "request");
  r.token = field<std::string>(j, "token", "request");
  r.memory_limit_mb = field<int64_t>(j, "memory_limit_mb", "request");
  r.cpu_time_limit_s = field<double>(j, "cpu_time_limit_s", "request");
  if (j.contains("pack_function")) {
    r.pack_function = field<std::string>(j, "pack_function", "request");
    r.packed_input = field<int>(j, "packed_input", "request");
    r.packed_shape = field<std::vector<int64_t>>(j, "packed_shape", "request");
  }
  return r;
}

std::string encode_ready(const std::string& token) {
  return nlohmann::json({{"ready", true}, {"token", token}}).dump();
}

bool is_ready(const std::string& line, const std::string& token) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("ready") && j.value("token", "") == token;
}

std::string encode_reply(const WorkerReply& r) {
  nlohmann::json j = {{"costs", r.costs},
                      {"error", error_name(r.error)},
                      {"message", r.message},
                      {"token", r.token},
                      {"restart", r.restart}};
  return dump_line(j);
}

WorkerReply decode_reply(const std::string& line) {
  nlohmann::json j = parse_object(line, "reply");
  WorkerReply r;
  r.costs = field<std::vector<double>>(j, "costs", "reply");
  r.error = parse_error_name(field<std::string>(j, "error", "reply"));
  r.message = field<std::string>(j, "message", "reply");
  r.token = field<std::string>(j, "token", "reply");
  r.restart = field<bool>(j, "restart", "reply");
  return r;
}

std::string encode_compile_request(const CompileRequest& r) {
  return dump_line({{"id", r.id},
                    {"workload", r.workload},
                    {"target", r.target},
                    {"recipe", r.recipe},
                    {"func_hash", r.func_hash},
                    {"pack_hash", r.pack_hash},
                    {"path", r.path},
                    {"timeout_s", r.timeout_s}});
}

CompileRequest decode_compile_request(const std::string& line) {
  nlohmann::json j = parse_object(line, "request", "compile");
  CompileRequest r;
  r.id = field<uint64_t>(j, "id", "request", "compile");
  r.workload = field<std::string>(j, "workload", "request", "compile");
  r.target = field<std::string>(j, "target", "request", "compile");
  r.recipe = field<std::string>(j, "recipe", "request", "compile");
  r.func_hash = field<uint64_t>(j, "func_hash", "request", "compile");
  r.pack_hash = field<uint64_t>(j, "pack_hash", "request", "compile");
  r.path = field<std::string>(j, "path", "request", "compile");
  r.timeout_s = field<double>(j, "timeout_s", "request", "compile");
  return r;
}

std::string encode_compile_reply(const CompileReply& r) {
  return dump_line({{"id", r.id},
                    {"rebuilt", r.rebuilt},
                    {"error", error_name(r.error)},
                    {"message", r.message},
                    {"compile_seconds", r.compile_seconds}});
}

CompileReply decode_compile_reply(const std::string& line) {
  nlohmann::json j = parse_object(line, "reply", "compile");
  CompileReply r;
  r.id = field<uint64_t>(j, "id", "reply", "compile");
  r.rebuilt = field<bool>(j, "rebuilt", "reply", "compile");
  r.error = parse_error_name(field<std::string>(j, "error", "reply", "compile"));
  r.message = field<std::string>(j, "message", "reply", "compile");
  r.compile_seconds = field<double>(j, "compile_seconds", "reply", "compile");
  return r;
}

}  // namespace temper::measure
