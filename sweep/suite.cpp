#include "sweep/suite.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>

#include "compiler/ir/duration.h"
#include "compiler/ir/error.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/file_io.h"

namespace temper::sweep {
namespace {

namespace fs = std::filesystem;

// A place in the suite file: 1-based line and column.
struct Pos {
  int line = 1;
  int col = 1;
};

[[noreturn]] void fail(const std::string& path, Pos pos, const std::string& message) {
  throw UserError(str(path, ":", pos.line, ":", pos.col, ": ", message));
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// ---- The TOML subset: text to tables of keys and values ----

struct Value {
  enum class Type { String, Integer, Float, Boolean, Array };
  Type type = Type::String;
  std::string string;        // Type::String: unescaped
  int64_t integer = 0;       // Type::Integer
  std::vector<Value> items;  // Type::Array
  std::string written;       // as in the file, for messages
  Pos pos;
};

struct KeyValue {
  std::string key;
  Pos pos;
  Value value;
};

// The top level (name "") or one [[workload]] or [[model]], its keys in file order.
struct Table {
  std::string name;
  Pos pos;
  std::vector<KeyValue> keys;
};

std::string label(const Table& table) {
  if (table.name.empty()) return "the top level";
  return str("[[", table.name, "]] at line ", table.pos.line);
}

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}
// The characters of a bare number or boolean (and of a misspelt one, to name it whole).
bool is_word_char(char c) {
  return is_key_char(c) || c == '.' || c == '+';
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  // tables[0] is the top level; then one table per header.
  std::vector<Table> read() {
    std::vector<Table> tables(1);
    while (true) {
      skip_spaces();
      if (at_end()) break;
      if (peek() == '#' || peek() == '\n') {
        end_of_line("");
        continue;
      }
      if (peek() == '[') {
        tables.push_back(header());
        end_of_line(str("[[", tables.back().name, "]]"));
      } else {
        key_value(tables.back());
        end_of_line(str("the value of '", tables.back().keys.back().key, "'"));
      }
    }
    return tables;
  }

 private:
  bool at_end() const { return i_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[i_]; }
  Pos pos() const { return {line_, col_}; }
  void advance() {
    if (text_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  [[noreturn]] void fail_here(const std::string& message) const { fail(path_, pos(), message); }

  // The bare word at the cursor ("" if none).
  std::string word() const {
    size_t end = i_;
    while (end < text_.size() && is_word_char(text_[end])) ++end;
    return text_.substr(i_, end - i_);
  }
  // What the cursor is on, for "expected ..., found ...".
  std::string found() const {
    if (at_end()) return "end of file";
    if (peek() == '\n') return "end of line";
    if (peek() == '#') return "a comment";
    std::string w = word();
    if (w.empty()) w = std::string(1, peek());
    if (w.size() > 24) w = w.substr(0, 24) + "...";
    return str("'", w, "'");
  }

  // '\r' too, so that CRLF files read as LF ones.
  void skip_spaces() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\r') advance();
  }
  // Spaces, comments and line ends: what may come between an array's items.
  void skip_blank() {
    while (true) {
      skip_spaces();
      if (peek() == '#') {
        while (!at_end() && peek() != '\n') advance();
      } else if (peek() == '\n') {
        advance();
      } else {
        return;
      }
    }
  }
  // Spaces and a comment up to the line's end, which it consumes.
  void end_of_line(const std::string& after) {
    skip_spaces();
    if (peek() == '#') {
      while (!at_end() && peek() != '\n') advance();
    }
    if (at_end()) return;
    if (peek() != '\n') fail_here(str("expected the end of the line after ", after, ", found ", found()));
    advance();
  }

  std::string bare_key(const std::string& expected) {
    size_t start = i_;
    while (is_key_char(peek())) advance();
    if (i_ == start) fail_here(str("expected ", expected, ", found ", found()));
    return text_.substr(start, i_ - start);
  }

  Table header() {
    Table table;
    table.pos = pos();
    const std::string accepted = "a suite has only [[workload]] and [[model]] tables";
    advance();
    if (peek() != '[') {
      size_t end = std::min(text_.find(']', i_), text_.find('\n', i_));
      std::string written = text_.substr(i_ - 1, end == std::string::npos ? end : end - i_ + 2);
      fail(path_, table.pos, str("unknown table '", written, "': ", accepted));
    }
    advance();
    skip_spaces();
    table.name = bare_key("a table name after '[['");
    skip_spaces();
    if (peek() != ']') fail_here(str("expected ']]' after '[[", table.name, "', found ", found()));
    advance();
    if (peek() != ']') fail_here(str("expected a second ']' to close '[[", table.name, "]', found ", found()));
    advance();
    if (table.name != "workload" && table.name != "model") {
      fail(path_, table.pos, str("unknown table '[[", table.name, "]]': ", accepted));
    }
    return table;
  }

  void key_value(Table& table) {
    Pos at = pos();
    std::string key = bare_key("a key or a [[workload]] or [[model]] header");
    skip_spaces();
    if (peek() != '=') fail_here(str("expected '=' after the key '", key, "', found ", found()));
    advance();
    skip_spaces();
    for (const KeyValue& kv : table.keys) {
      if (kv.key == key) {
        fail(path_, at,
             str("key '", key, "' is given twice in ", label(table), " (first at ", kv.pos.line, ":", kv.pos.col, ")"));
      }
    }
    Value v = value(false);
    table.keys.push_back({key, at, std::move(v)});
  }

  // Arrays hold strings, numbers and booleans only.
  Value value(bool in_array) {
    Value v;
    v.pos = pos();
    size_t start = i_;
    char c = peek();
    if (c == '"' || c == '\'') {
      v.type = Value::Type::String;
      v.string = string_body(c);
    } else if (c == '[' && !in_array) {
      v.type = Value::Type::Array;
      array_items(v);
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-') {
      number(v);
    } else if (word() == "true" || word() == "false") {
      v.type = Value::Type::Boolean;
      for (size_t n = word().size(); n > 0; --n) advance();
    } else if (in_array) {
      fail_here(str("expected an array item (a \"string\", a number or true/false) or ']', found ", found()));
    } else {
      fail_here(str("expected a value after '=' (a \"string\", a number, true/false or [an array]), found ", found()));
    }
    v.written = text_.substr(start, i_ - start);
    return v;
  }

  // A basic "string" (with escapes) or a literal 'string' (without), on one line.
  std::string string_body(char quote) {
    Pos open = pos();
    advance();
    std::string out;
    while (peek() != quote) {
      if (at_end() || peek() == '\n') {
        fail(path_, open,
             str("unterminated string: expected a closing ", quote == '"' ? "'\"'" : "\"'\"",
                 " before the end of the line, found ", found()));
      }
      if (quote == '"' && peek() == '\\') {
        Pos escape = pos();
        advance();
        char e = peek();
        if (e == '"' || e == '\\') {
          out += e;
        } else if (e == 'n') {
          out += '\n';
        } else if (e == 't') {
          out += '\t';
        } else {
          fail(path_, escape,
               str("unknown escape '\\", at_end() || e == '\n' ? std::string() : std::string(1, e),
                   "' in a string: use \\\" \\\\ \\n or \\t, or a 'literal string' without escapes"));
        }
      } else {
        out += peek();
      }
      advance();
    }
    advance();
    return out;
  }

  void number(Value& v) {
    const std::string w = word();
    auto bad = [&] { fail_here(str("expected a number, found '", w, "'")); };
    std::string digits;  // w without its '_', which TOML allows between digits only
    for (size_t k = 0; k < w.size(); ++k) {
      if (w[k] != '_') {
        digits += w[k];
      } else if (k == 0 || k + 1 == w.size() || !std::isdigit(static_cast<unsigned char>(w[k - 1])) ||
                 !std::isdigit(static_cast<unsigned char>(w[k + 1]))) {
        bad();
      }
    }
    if (!digits.empty() && digits[0] == '+') digits.erase(0, 1);  // from_chars takes no '+'
    size_t sign = !digits.empty() && digits[0] == '-' ? 1 : 0;
    if (digits.size() <= sign || !std::isdigit(static_cast<unsigned char>(digits[sign]))) bad();
    const char* first = digits.data();
    const char* last = first + digits.size();
    if (digits.find_first_of(".eE") == std::string::npos) {
      auto [end, error] = std::from_chars(first, last, v.integer);
      if (error == std::errc::result_out_of_range) fail_here(str("the integer ", w, " is out of range"));
      if (error != std::errc() || end != last) bad();
      v.type = Value::Type::Integer;
    } else {
      double number = 0;
      auto [end, error] = std::from_chars(first, last, number);
      if (error != std::errc() || end != last) bad();
      v.type = Value::Type::Float;
    }
    for (size_t n = w.size(); n > 0; --n) advance();
  }

  void array_items(Value& v) {
    Pos open = pos();
    advance();
    while (true) {
      skip_blank();
      if (peek() == ']') break;
      if (at_end()) {
        fail_here(str("expected ']' to close the array opened at ", open.line, ":", open.col, ", found end of file"));
      }
      v.items.push_back(value(true));
      skip_blank();
      if (peek() == ',') {
        advance();
      } else if (peek() != ']') {
        fail_here(str("expected ',' or ']' after an array item, found ", found()));
      }
    }
    advance();
  }

  const std::string& text_;
  const std::string& path_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
};

// ---- The suite: tables to entries, each key checked ----

// What each baseline can time: the workload ops it has kernels for; none: models only.
struct Baseline {
  std::string name;
  std::vector<std::string> ops;
};

const std::vector<Baseline>& baseline_table() {
  static const std::vector<Baseline> table = {
      {"onednn", {"matmul", "dense", "conv2d", "conv2d_nchwc", "depthwise_conv2d", "depthwise_conv2d_nchwc"}},
      {"openblas", {"matmul", "dense"}},
      {"eigen", {"matmul", "dense"}},
      {"cublas", {"matmul", "dense"}},
      {"onnxruntime", {}},
  };
  return table;
}

const char* type_name(Value::Type type) {
  switch (type) {
    case Value::Type::String:
      return "a string";
    case Value::Type::Integer:
      return "an integer";
    case Value::Type::Float:
      return "a float";
    case Value::Type::Boolean:
      return "a boolean";
    case Value::Type::Array:
      return "an array";
  }
  return "";
}

std::string found_value(const Value& v) {
  if (v.type == Value::Type::Array) return "an array";
  return str(type_name(v.type), " (", v.written, ")");
}

class Checker {
 public:
  Checker(const std::string& path, const std::string& base_dir) : path_(path), base_dir_(base_dir) {}

  void top_level(const Table& table, Suite& suite) {
    check_keys(table, {"name", "trials", "time_budget", "rounds", "threads"});
    if (const KeyValue* kv = find(table, "name")) suite.name = string_of(*kv);
    if (const KeyValue* kv = find(table, "trials")) suite.trials = int_of(*kv, 0);
    if (const KeyValue* kv = find(table, "time_budget")) {
      suite.time_budget = string_of(*kv);
      try {
        parse_duration(suite.time_budget, "time_budget");
      } catch (const UserError& e) {
        fail(path_, kv->value.pos, e.what());
      }
    }
    if (const KeyValue* kv = find(table, "rounds")) suite.rounds = int_of(*kv, 1);
    if (const KeyValue* kv = find(table, "threads")) suite.threads = int_of(*kv, 0);
  }

  SuiteEntry workload(const Table& table, const Suite& suite) {
    check_keys(table, {"workload", "baselines", "trials", "space"});
    const KeyValue& kv = require(table, "workload", "workload = \"matmul:M=1024,N=1024,K=1024\"");
    const std::string text = string_of(kv);
    ops::Workload workload;
    try {
      workload = ops::Workload::parse(text);
      ops::instantiate(workload);
    } catch (const UserError& error) {
      fail(path_, kv.value.pos, str("workload \"", text, "\": ", error.what()));
    }
    SuiteEntry entry = common(table, suite, SuiteEntry::Kind::Workload);
    entry.workload = workload.to_string();
    read_baselines(table, entry, workload.op, str("[[workload]] \"", text, "\""));
    return entry;
  }

  SuiteEntry model(const Table& table, const Suite& suite) {
    check_keys(table, {"path", "dims", "baselines", "trials", "space", "in_model"});
    const KeyValue& kv = require(table, "path", "path = \"model.onnx\"");
    SuiteEntry entry = common(table, suite, SuiteEntry::Kind::Model);
    if (const KeyValue* in_model = find(table, "in_model")) entry.in_model = int_of(*in_model, 0);
    entry.written_path = string_of(kv);
    // An absolute path stays as it is: operator/ replaces base_dir with it.
    entry.model_path = (fs::path(base_dir_) / entry.written_path).lexically_normal().string();
    std::error_code error;
    fs::file_status status = fs::status(entry.model_path, error);
    if (!fs::exists(status) || fs::is_directory(status)) {
      fail(path_, kv.value.pos,
           str("model file '", entry.written_path, "' ", fs::exists(status) ? "is a folder" : "not found",
               " (resolved to '", entry.model_path, "')"));
    }
    if (const KeyValue* dims = find(table, "dims")) {
      for (const Value* item : strings_of(*dims)) {
        check_dim(*item, entry.dims);
        entry.dims.push_back(item->string);
      }
    }
    read_baselines(table, entry, "", str("[[model]] '", entry.written_path, "'"));
    return entry;
  }

 private:
  const KeyValue* find(const Table& table, const std::string& key) const {
    for (const KeyValue& kv : table.keys) {
      if (kv.key == key) return &kv;
    }
    return nullptr;
  }

  const KeyValue& require(const Table& table, const std::string& key, const std::string& example) const {
    const KeyValue* kv = find(table, key);
    if (!kv) fail(path_, table.pos, str(label(table), " has no '", key, "' key: write ", example));
    return *kv;
  }

  void check_keys(const Table& table, const std::vector<std::string>& accepted) const {
    for (const KeyValue& kv : table.keys) {
      if (std::find(accepted.begin(), accepted.end(), kv.key) == accepted.end()) {
        fail(path_, kv.pos,
             str("unknown key '", kv.key, "' in ", label(table), ": the keys accepted there are ", join(accepted)));
      }
    }
  }

  std::string string_of(const KeyValue& kv) const {
    if (kv.value.type != Value::Type::String) {
      fail(path_, kv.value.pos, str("'", kv.key, "' must be a string, found ", found_value(kv.value)));
    }
    return kv.value.string;
  }

  int int_of(const KeyValue& kv, int min) const {
    const Value& v = kv.value;
    if (v.type != Value::Type::Integer) {
      fail(path_, v.pos, str("'", kv.key, "' must be an integer, found ", found_value(v)));
    }
    if (v.integer < min) {
      fail(path_, v.pos,
           str(kv.key, " must be ", min == 0 ? "0 or more" : str("at least ", min), ", found ", v.integer));
    }
    if (v.integer > INT_MAX) fail(path_, v.pos, str(kv.key, " must be at most ", INT_MAX, ", found ", v.integer));
    return static_cast<int>(v.integer);
  }

  std::vector<const Value*> strings_of(const KeyValue& kv) const {
    if (kv.value.type != Value::Type::Array) {
      fail(path_, kv.value.pos,
           str("'", kv.key, "' must be an array of strings [\"...\", ...], found ", found_value(kv.value)));
    }
    std::vector<const Value*> items;
    for (const Value& item : kv.value.items) {
      if (item.type != Value::Type::String) {
        fail(path_, item.pos, str("each item of '", kv.key, "' must be a string, found ", found_value(item)));
      }
      items.push_back(&item);
    }
    return items;
  }

  // The keys every entry takes but baselines, which depend on what the entry is.
  SuiteEntry common(const Table& table, const Suite& suite, SuiteEntry::Kind kind) const {
    SuiteEntry entry;
    entry.kind = kind;
    entry.line = table.pos.line;
    entry.trials = suite.trials;
    if (const KeyValue* kv = find(table, "trials")) entry.trials = int_of(*kv, 0);
    if (const KeyValue* kv = find(table, "space")) {
      entry.space = string_of(*kv);
      if (entry.space != "template" && entry.space != "auto" && entry.space != "both") {
        fail(path_, kv->value.pos,
             str("space must be \"template\", \"auto\" or \"both\", found \"", entry.space, "\""));
      }
    }
    return entry;
  }

  // op: the workload's op; "" for a model. what: the entry, for messages.
  void read_baselines(const Table& table, SuiteEntry& entry, const std::string& op, const std::string& what) const {
    const KeyValue* kv = find(table, "baselines");
    if (!kv) return;
    for (const Value* item : strings_of(*kv)) {
      const std::string& name = item->string;
      auto baseline = std::find_if(baseline_table().begin(), baseline_table().end(),
                                   [&](const Baseline& b) { return b.name == name; });
      if (baseline == baseline_table().end()) {
        fail(path_, item->pos, str("unknown baseline '", name, "': the known baselines are ", join(known_baselines())));
      }
      const std::vector<std::string>& ops = baseline->ops;
      bool applies = op.empty() ? ops.empty() : std::find(ops.begin(), ops.end(), op) != ops.end();
      if (!applies) {
        fail(path_, item->pos,
             str("baseline '", name, "' does not apply to ", what, ": ", name, " serves ",
                 ops.empty() ? "[[model]] entries only" : str("workloads of the ops ", join(ops))));
      }
      if (std::find(entry.baselines.begin(), entry.baselines.end(), name) != entry.baselines.end()) {
        fail(path_, item->pos, str("baseline '", name, "' is listed twice in ", what));
      }
      entry.baselines.push_back(name);
    }
  }

  // NAME=N with N a positive integer, each NAME once.
  void check_dim(const Value& item, const std::vector<std::string>& earlier) const {
    const std::string& dim = item.string;
    size_t eq = dim.find('=');
    std::string size = eq == std::string::npos ? "" : dim.substr(eq + 1);
    int64_t n = 0;
    auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), n);
    if (eq == 0 || size.empty() || !std::isdigit(static_cast<unsigned char>(size[0])) || error != std::errc() ||
        end != size.data() + size.size() || n < 1) {
      fail(path_, item.pos, str("dims item '", dim, "' is not NAME=N with N a positive integer (e.g. \"batch=1\")"));
    }
    for (const std::string& other : earlier) {
      if (other.substr(0, other.find('=')) == dim.substr(0, eq)) {
        fail(path_, item.pos, str("dims gives '", dim.substr(0, eq), "' twice ('", other, "', '", dim, "')"));
      }
    }
  }

  const std::string& path_;
  const std::string& base_dir_;
};

}  // namespace

std::string SuiteEntry::name() const {
  return kind == Kind::Workload ? workload : written_path;
}

const std::vector<std::string>& known_baselines() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Baseline& b : baseline_table()) out.push_back(b.name);
    return out;
  }();
  return names;
}

Suite parse_suite_text(const std::string& text, const std::string& path, const std::string& base_dir) {
  std::vector<Table> tables = Reader(text, path).read();
  Checker checker(path, base_dir);
  Suite suite;
  suite.path = path;
  suite.name = fs::path(path).stem().string();
  checker.top_level(tables[0], suite);
  for (size_t t = 1; t < tables.size(); ++t) {
    const Table& table = tables[t];
    suite.entries.push_back(table.name == "workload" ? checker.workload(table, suite) : checker.model(table, suite));
  }
  if (suite.entries.empty()) {
    throw UserError(str(path, ": the suite lists no [[workload]] or [[model]]: nothing to sweep"));
  }
  return suite;
}

Suite parse_suite_file(const std::string& path) {
  return parse_suite_text(read_file(path, "suite file"), path, fs::path(path).parent_path().string());
}

}  // namespace temper::sweep
