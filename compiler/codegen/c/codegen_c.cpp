#include "compiler/codegen/c/codegen_c.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "compiler/ir/functor.h"
#include "compiler/ir/math_functions.h"
#include "compiler/ir/text.h"
#include "compiler/runtime/module.h"

namespace temper {
namespace {

// Names a local may not take: C keywords, the parameters of the functions we print.
const std::set<std::string>& reserved_local_names() {
  static const std::set<std::string> kReserved = {
      "auto",     "break",    "case",      "char",        "const",    "continue", "default",  "do",
      "double",   "else",     "enum",      "extern",      "float",    "for",      "goto",     "if",
      "inline",   "int",      "long",      "register",    "restrict", "return",   "short",    "signed",
      "sizeof",   "static",   "struct",    "switch",      "typedef",  "union",    "unsigned", "void",
      "volatile", "while",    "bool",      "true",        "false",    "NULL",     "NAN",      "INFINITY",
      "args",     "num_args", "iteration", "closure_arg", "closure",  "expected"};
  return kReserved;
}

std::string sanitize(const std::string& base) {
  std::string s;
  for (char c : base) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  // Keep clear of the runtime's and the helpers' names.
  if (s.rfind("temper_", 0) == 0 || s.rfind("__", 0) == 0) s = "v_" + s;
  return s;
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The c_runtime_api.h constant for t's type code.
const char* dtype_code_name(DataType t) {
  switch (t.code()) {
    case DataType::Code::Int:
      return "TEMPER_DTYPE_INT";
    case DataType::Code::UInt:
      return "TEMPER_DTYPE_UINT";
    case DataType::Code::Float:
      return "TEMPER_DTYPE_FLOAT";
    case DataType::Code::Handle:
      return "TEMPER_DTYPE_HANDLE";
  }
  return "?";
}

// Whether evaluating e may read b, or write memory at all (an extern call).
bool reads_or_calls(const Expr& e, const Buffer& b) {
  bool found = false;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::BufferLoad) found |= static_cast<const BufferLoadNode*>(n)->buffer.same_as(b);
    if (n->kind == NodeKind::Call) found |= static_cast<const CallNode*>(n)->call_kind == CallKind::Extern;
  });
  return found;
}

}  // namespace

std::string emit_c(const std::vector<PrimFunc>& funcs) {
  CodeGenC printer;
  return printer.emit(funcs);
}

std::string CodeGenC::emit(const std::vector<PrimFunc>& funcs) {
  check_lowered(funcs);
  // Names of functions the code calls, which no local may hide.
  for (const PrimFunc& f : funcs) {
    global_names_.insert(function_symbol(f.name));
    post_order_visit(f.body, [&](const Node* n) {
      if (n->kind == NodeKind::Call && static_cast<const CallNode*>(n)->call_kind == CallKind::Extern) {
        global_names_.insert(static_cast<const CallNode*>(n)->name);
      }
    });
  }
  for (const std::string& libm : libm_functions()) {
    global_names_.insert(libm);
    global_names_.insert(libm + "f");
  }
  for (const PrimFunc& f : funcs) print_function(f);
  return assemble();
}

std::string CodeGenC::assemble() const {
  std::ostringstream os;
  os << banner();
  print_includes(os);
  if (!helpers_.empty()) os << "\n";
  for (const auto& [name, definition] : helpers_) os << definition;
  if (!externs_.empty()) os << "\n";
  for (const auto& [name, prototype] : externs_) os << prototype << "\n";
  for (const std::string& definition : definitions_) os << "\n" << definition;
  return os.str();
}

void CodeGenC::print_includes(std::ostream& os) const {
  os << "#include <math.h>\n"
        "#include <stdbool.h>\n"
        "#include <stddef.h>\n"
        "#include <stdint.h>\n\n"
        "#include \"compiler/runtime/c_runtime_api.h\"\n";
}

std::string CodeGenC::scalar_type(DataType t) const {
  if (t.is_handle()) return "void*";
  if (t.is_bool()) return "bool";
  if (t.is_float()) {
    switch (t.bits()) {
      case 16:
        return "_Float16";
      case 32:
        return "float";
      case 64:
        return "double";
    }
  } else if (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) {
    return str(t.is_uint() ? "uint" : "int", t.bits(), "_t");
  }
  throw UserError(str("the C backend has no type for ", t));
}

std::string CodeGenC::storage_type(DataType t) const {
  return t.is_bool() ? "uint8_t" : scalar_type(t);
}

// ------------------------------------------------------------------ names

std::string CodeGenC::fresh_local(const std::string& base) {
  std::string root = sanitize(base);
  std::string name = root;
  for (int k = 1; used_local_names_.count(name) || reserved_local_names().count(name); ++k) {
    name = root + "_" + std::to_string(k);
  }
  used_local_names_.insert(name);
  return name;
}

std::string CodeGenC::fresh_global(const std::string& base) {
  // Also clear of the current function's locals, which would hide it.
  std::string name = base;
  for (int k = 1; global_names_.count(name) || used_local_names_.count(name); ++k) {
    name = base + "_" + std::to_string(k);
  }
  global_names_.insert(name);
  used_local_names_.insert(name);
  return name;
}

std::string CodeGenC::name_of(const Var& v) {
  auto it = local_names_.find(v.get());
  if (it != local_names_.end()) return it->second;
  return local_names_[v.get()] = fresh_local(v.name());
}

std::string CodeGenC::name_of(const Buffer& b) {
  auto it = local_names_.find(b.get());
  if (it != local_names_.end()) return it->second;
  return local_names_[b.get()] = fresh_local(b->name);
}

CodeGenC::ScopedName::ScopedName(CodeGenC& printer, const void* key, const std::string& base)
    : printer_(printer), key_(key) {
  auto it = printer.local_names_.find(key);
  if (it != printer.local_names_.end()) hidden_ = it->second;
  bool first_binding = printer.declared_.insert(key).second;
  name_ = first_binding && hidden_ ? *hidden_ : printer.fresh_local(base);
  printer.local_names_[key] = name_;
}

CodeGenC::ScopedName::~ScopedName() {
  if (hidden_) {
    printer_.local_names_[key_] = *hidden_;
  } else {
    printer_.local_names_.erase(key_);
  }
}

// ------------------------------------------------------------------ functions

std::string CodeGenC::pointer_decl(const Buffer& b) {
  return str(storage_type(b->dtype), "* ", restrict_qualifier(), " ", name_of(b));
}

std::string CodeGenC::aligned_pointer(const Buffer& b, const std::string& value) {
  return str("(", storage_type(b->dtype), "*)__builtin_assume_aligned(", value, ", ", b->alignment, ")");
}

void CodeGenC::start_function(const std::string& name) {
  func_name_ = name;
  local_names_.clear();
  declared_.clear();
  used_local_names_.clear();
  lane_arrays_.clear();
  lane_counter_.clear();
}

void CodeGenC::print_function(const PrimFunc& f) {
  start_function(f.name);
  ShapeBinding binding = bind_shape_vars(f);
  std::string compute_name = fresh_global(f.name + "_compute");
  used_local_names_ = global_names_;

  FunctionText text;
  fn_ = &text;
  std::vector<std::string> params;
  for (const Buffer& b : f.params) params.push_back(pointer_decl(b));
  for (const Var& v : binding.shape_vars) params.push_back(scalar_type(v.dtype()) + " " + name_of(v));
  for (const Buffer& b : f.params) {
    if (b->alignment > b->dtype.bytes()) line(str(name_of(b), " = ", aligned_pointer(b, name_of(b)), ";"));
  }
  print_stmt(f.body);
  line("return 0;");
  fn_ = nullptr;
  definitions_.push_back(str(compute_function_qualifier(), " int32_t ", compute_name, "(",
                             params.empty() ? "void" : join(params, ", "), ") {\n", text.body.str(), "}\n"));
  print_wrapper(f, binding, compute_name);
}

void CodeGenC::print_wrapper(const PrimFunc& f, const ShapeBinding& binding, const std::string& compute_name) {
  std::ostringstream w;
  std::string func = c_string(f.name);
  w << "int32_t " << function_symbol(f.name) << "(const TemperTensor* args, int32_t num_args) {\n";
  w << "  if (temper_check_num_args(" << func << ", num_args, " << f.params.size() << ") != 0) return -1;\n";
  // Every argument's header first, binding the shape variables; then the shapes, which
  // may use variables a later argument binds.
  for (size_t p = 0; p < f.params.size(); ++p) {
    const Buffer& b = f.params[p];
    DataType t = b->dtype;
    w << "  if (temper_check_tensor_header(" << func << ", args, " << p << ", " << c_string(b->name) << ", " << b.ndim()
      << ", " << dtype_code_name(t) << ", " << t.bits() << ", " << b->alignment << ") != 0) return -1;\n";
    for (int d = 0; d < b.ndim(); ++d) {
      if (!binding.binds_var[p][d]) continue;
      Var v(std::static_pointer_cast<const VarNode>(b->shape[d].shared()));
      std::string type = scalar_type(v.dtype());
      w << "  " << type << " " << name_of(v) << " = (" << type << ")args[" << p << "].shape[" << d << "];\n";
    }
  }
  std::vector<std::string> call_args;
  for (size_t p = 0; p < f.params.size(); ++p) {
    const Buffer& b = f.params[p];
    std::vector<std::string> expected;
    for (const Expr& extent : b->shape) {
      const int64_t* n = as_const_int(extent);
      expected.push_back(n ? std::to_string(*n) : "(int64_t)" + print_expr(extent));
    }
    if (b.ndim() > 0) {
      w << "  {\n    const int64_t expected[" << b.ndim() << "] = {" << join(expected, ", ") << "};\n";
      w << "    if (temper_check_tensor_shape(" << func << ", args, " << p << ", " << c_string(b->name)
        << ", expected) != 0) return -1;\n  }\n";
    }
    call_args.push_back(str("(", storage_type(b->dtype), "*)args[", p, "].data"));
  }
  for (const Var& v : binding.shape_vars) call_args.push_back(name_of(v));
  w << "  return " << compute_name << "(" << join(call_args, ", ") << ");\n}\n";
  definitions_.push_back(w.str());
}

// ------------------------------------------------------------------ statements

void CodeGenC::line(const std::string& text) {
  fn_->body << std::string(2 * fn_->indent, ' ') << text << "\n";
}

void CodeGenC::print_error_return() {
  for (auto it = fn_->heap_buffers.rbegin(); it != fn_->heap_buffers.rend(); ++it) line("temper_free(" + *it + ");");
  line("return -1;");
}

void CodeGenC::print_stmt(const Stmt& s) {
  if (!s.defined()) return;
  if (auto* op = s.as<BufferStoreNode>()) {
    print_store(op);
  } else if (auto* op = s.as<EvaluateNode>()) {
    if (op->value.dtype().is_vector()) {
      print_lane_loop(op->value.dtype().lanes(), "(void)" + print_lanes(op->value) + ";");
    } else {
      line(print_expr(op->value) + ";");
    }
  } else if (auto* op = s.as<LetStmtNode>()) {
    DataType t = op->var.dtype();
    if (t.is_vector()) {
      // A vector Var is an array of its lanes.
      std::string value = print_lanes(op->value);
      ScopedName name(*this, op->var);
      line(str(scalar_type(t.element_of()), " ", name.name(), "[", t.lanes(), "];"));
      print_lane_loop(t.lanes(), str(name.name(), "[", lane_counter(), "] = ", value, ";"));
      lane_arrays_.insert(op->var.get());
      print_stmt(op->body);
    } else {
      std::string value = print_expr(op->value);
      ScopedName name(*this, op->var);
      line(str(scalar_type(t), " ", name.name(), " = ", value, ";"));
      print_stmt(op->body);
    }
  } else if (auto* op = s.as<ForNode>()) {
    switch (op->for_kind) {
      case ForKind::Parallel:
        print_parallel_loop(op);
        break;
      case ForKind::ThreadBinding:
        print_thread_binding_loop(op);
        break;
      case ForKind::Unrolled:
        print_unrolled_loop(op);
        break;
      default:
        print_serial_loop(op);
    }
  } else if (auto* op = s.as<IfThenElseNode>()) {
    line("if (" + print_expr(op->condition) + ") {");
    ++fn_->indent;
    print_stmt(op->then_case);
    --fn_->indent;
    if (op->else_case.defined()) {
      line("} else {");
      ++fn_->indent;
      print_stmt(op->else_case);
      --fn_->indent;
    }
    line("}");
  } else if (auto* op = s.as<SeqStmtNode>()) {
    for (const Stmt& child : op->seq) print_stmt(child);
  } else if (auto* op = s.as<AllocateNode>()) {
    print_allocate(op);
  } else {
    TEMPER_CHECK(false, "the C backend cannot print a ", node_kind_name(s.kind()), " statement");
  }
}

void CodeGenC::print_serial_loop(const ForNode* op) {
  std::string type = scalar_type(op->loop_var.dtype());
  std::string extent = print_expr(op->extent);
  std::string begin = print_expr(op->min);
  ScopedName name(*this, op->loop_var);
  const std::string& v = name.name();
  if (is_zero(op->min) && (op->extent.as<IntImmNode>() || op->extent.as<VarNode>())) {
    line(str("for (", type, " ", v, " = 0; ", v, " < ", extent, "; ++", v, ") {"));
  } else {
    std::string end = fresh_local(v + "_end");
    line(str("for (", type, " ", v, " = ", begin, ", ", end, " = ", begin, " + ", extent, "; ", v, " < ", end, "; ++",
             v, ") {"));
  }
  ++fn_->indent;
  print_stmt(op->body);
  --fn_->indent;
  line("}");
}

void CodeGenC::print_parallel_loop(const ForNode* op) {
  Captures captures = loop_body_captures(op);
  std::string body_name = fresh_global(func_name_ + "_parallel");
  std::string closure_type = body_name + "_closure";
  global_names_.insert(closure_type);
  bool needs_min = !is_zero(op->min);
  std::string min_field = needs_min ? fresh_local(op->loop_var.name() + "_min") : "";

  // The closure's fields, and the call site's initialiser, in one order.
  std::vector<std::string> fields;
  std::vector<std::string> values;
  for (const Buffer& b : captures.buffers) {
    fields.push_back(storage_type(b->dtype) + "* " + name_of(b));
    values.push_back(name_of(b));
  }
  for (const Var& v : captures.vars) {
    bool lanes = lane_arrays_.count(v.get()) > 0;
    fields.push_back(str(scalar_type(v.dtype().element_of()), lanes ? "* " : " ", name_of(v)));
    values.push_back(name_of(v));
  }
  if (needs_min) {
    fields.push_back(scalar_type(op->loop_var.dtype()) + " " + min_field);
    values.push_back(print_expr(op->min));
  }

  // The outlined body, a C function of its own.
  FunctionText text;
  FunctionText* outer = fn_;
  fn_ = &text;
  line(str("const ", closure_type, "* closure = (const ", closure_type, "*)closure_arg;"));
  for (const Buffer& b : captures.buffers) {
    line(str(pointer_decl(b), " = ", aligned_pointer(b, "closure->" + name_of(b)), ";"));
  }
  for (const Var& v : captures.vars) {
    bool lanes = lane_arrays_.count(v.get()) > 0;
    line(str(scalar_type(v.dtype().element_of()), lanes ? "* " : " ", name_of(v), " = closure->", name_of(v), ";"));
  }
  {
    std::string type = scalar_type(op->loop_var.dtype());
    ScopedName loop_var(*this, op->loop_var);
    line(str(type, " ", loop_var.name(), " = ", needs_min ? "closure->" + min_field + " + " : "", "(", type,
             ")iteration;"));
    print_stmt(op->body);
  }
  line("return 0;");
  fn_ = outer;
  std::string struct_body;
  for (const std::string& field : fields) struct_body += "  " + field + ";\n";
  definitions_.push_back(str("typedef struct {\n", struct_body, "} ", closure_type, ";\n\n", "static int32_t ",
                             body_name, "(int64_t iteration, void* closure_arg) {\n", text.body.str(), "}\n"));

  // The call site.
  std::string closure = fresh_local("captured");
  line("{");
  ++fn_->indent;
  line(str(closure_type, " ", closure, " = {", join(values, ", "), "};"));
  std::string extent = as_const_int(op->extent) ? print_expr(op->extent) : "(int64_t)" + print_expr(op->extent);
  line(str("if (temper_parallel_for(", extent, ", ", body_name, ", &", closure, ") != 0) {"));
  ++fn_->indent;
  print_error_return();
  --fn_->indent;
  line("}");
  --fn_->indent;
  line("}");
}

void CodeGenC::print_allocate(const AllocateNode* op) {
  const Buffer& b = op->buffer;
  std::string size = print_expr(buffer_elements(b));
  ScopedName scoped(*this, b);
  const std::string& name = scoped.name();
  std::string type = storage_type(b->dtype);
  if (allocate_on_stack(b)) {
    int64_t elements = *as_const_int(buffer_elements(b));
    line(str(type, " ", name, "[", std::max<int64_t>(elements, 1), "] __attribute__((aligned(", b->alignment, ")));"));
    print_stmt(op->body);
    return;
  }
  line(str(type, "* ", restrict_qualifier(), " ", name, " = (", type, "*)temper_alloc(", size, " * (int64_t)sizeof(",
           type, "));"));
  line("if (" + name + " == NULL) {");
  ++fn_->indent;
  print_error_return();
  --fn_->indent;
  line("}");
  fn_->heap_buffers.push_back(name);
  print_stmt(op->body);
  fn_->heap_buffers.pop_back();
  line("temper_free(" + name + ");");
}

void CodeGenC::print_store(const BufferStoreNode* op) {
  if (op->value.dtype().is_vector()) return print_vector_store(op);
  std::string value = print_expr(op->value);
  if (op->buffer->dtype.is_bool()) value = "(uint8_t)" + value;
  line(element_ref(op->buffer, flat_index(op->indices)) + " = " + value + ";");
}

void CodeGenC::print_vector_store(const BufferStoreNode* op) {
  int lanes = op->value.dtype().lanes();
  Expr index = flat_index(op->indices);
  const Buffer& b = op->buffer;
  std::string cast_to_storage = b->dtype.is_bool() ? "(uint8_t)" : "";
  // Vector semantics read every lane before writing any: when the value reads the buffer
  // it stores to, gather the lanes first.
  if (reads_or_calls(op->value, b) || reads_or_calls(index, b)) {
    std::string staged = fresh_local(name_of(b) + "_lanes");
    line(str(scalar_type(b->dtype), " ", staged, "[", lanes, "];"));
    print_lane_loop(lanes, str(staged, "[", lane_counter(), "] = ", print_lanes(op->value), ";"));
    print_lane_loop(lanes, str(element_ref(b, index), " = ", cast_to_storage, staged, "[", lane_counter(), "];"));
  } else {
    print_lane_loop(lanes, str(element_ref(b, index), " = ", cast_to_storage, print_lanes(op->value), ";"));
  }
}

const std::string& CodeGenC::lane_counter() {
  if (lane_counter_.empty()) lane_counter_ = fresh_local("lane");
  return lane_counter_;
}

std::string CodeGenC::print_lanes(const Expr& e) {
  std::string outer = lane_;
  lane_ = lane_counter();
  std::string text = print_expr(e);
  lane_ = outer;
  return text;
}

void CodeGenC::print_lane_loop(int lanes, const std::string& statement) {
  const std::string& l = lane_counter();
  line(str("for (int32_t ", l, " = 0; ", l, " < ", lanes, "; ++", l, ") {"));
  ++fn_->indent;
  line(statement);
  --fn_->indent;
  line("}");
}

// ------------------------------------------------------------------ expressions

// Before print_expr, whose generic lambda calls it: clang instantiates it only from there.
template <NodeKind K>
std::string CodeGenC::print_node(const BinaryNode<K>* op) {
  DataType t = op->a.dtype().element_of();
  std::string a = print_expr(op->a);
  std::string b = print_expr(op->b);
  auto infix = [&](const char* symbol) { return "(" + a + " " + symbol + " " + b + ")"; };
  auto call = [&](const std::string& fn) { return fn + "(" + a + ", " + b + ")"; };
  if constexpr (K == NodeKind::Add) return rounded(t, infix("+"));
  if constexpr (K == NodeKind::Sub) return rounded(t, infix("-"));
  if constexpr (K == NodeKind::Mul) return rounded(t, infix("*"));
  if constexpr (K == NodeKind::Div) return rounded(t, infix("/"));
  if constexpr (K == NodeKind::Mod) return rounded(t, infix("%"));
  if constexpr (K == NodeKind::FloorDiv) return t.is_uint() ? rounded(t, infix("/")) : call(helper("floordiv", t));
  if constexpr (K == NodeKind::FloorMod) return t.is_uint() ? rounded(t, infix("%")) : call(helper("floormod", t));
  if constexpr (K == NodeKind::Min) return call(helper("min", t));
  if constexpr (K == NodeKind::Max) return call(helper("max", t));
  if constexpr (K == NodeKind::EQ) return infix("==");
  if constexpr (K == NodeKind::NE) return infix("!=");
  if constexpr (K == NodeKind::LT) return infix("<");
  if constexpr (K == NodeKind::LE) return infix("<=");
  if constexpr (K == NodeKind::GT) return infix(">");
  if constexpr (K == NodeKind::GE) return infix(">=");
  if constexpr (K == NodeKind::And) return infix("&&");
  if constexpr (K == NodeKind::Or) return infix("||");
}

std::string CodeGenC::print_expr(const Expr& e) {
  TEMPER_CHECK(e.defined(), "undefined expression in ", func_name_);
  TEMPER_CHECK(e.dtype().is_scalar() || !lane_.empty(), "vector expression outside a lane loop in ", func_name_);
  return dispatch(e.get(), [&](const auto* op) -> std::string {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
    if constexpr (std::is_base_of_v<ExprNode, T>) {
      return print_node(op);
    } else {
      TEMPER_CHECK(false, "statement in expression position");
      return {};
    }
  });
}

std::string CodeGenC::literal(DataType t, int64_t v) const {
  if (t.is_bool()) return v ? "true" : "false";
  if (t.is_float()) return literal(t, static_cast<double>(v));
  std::string digits = std::to_string(v);
  if (t.is_int() && t.bits() == 64) {
    if (v == std::numeric_limits<int64_t>::min()) return "(-INT64_C(9223372036854775807) - 1)";
    return v < 0 ? "(-INT64_C(" + std::to_string(-v) + "))" : "INT64_C(" + digits + ")";
  }
  if (t.is_int() && t.bits() == 32) {
    if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
    return v < 0 ? "(" + digits + ")" : digits;
  }
  if (t.is_uint() && t.bits() == 64) return "UINT64_C(" + std::to_string(static_cast<uint64_t>(v)) + ")";
  if (t.is_uint() && t.bits() == 32) return std::to_string(static_cast<uint32_t>(v)) + "u";
  return "((" + scalar_type(t) + ")" + digits + ")";
}

std::string CodeGenC::literal(DataType t, double v) const {
  if (!t.is_float()) return literal(t, static_cast<int64_t>(v));
  std::string cast = t.bits() == 32 ? "" : "(" + scalar_type(t) + ")";
  if (std::isnan(v)) return "(" + cast + "NAN)";
  if (std::isinf(v)) return v > 0 ? "(" + cast + "INFINITY)" : "(-" + cast + "INFINITY)";
  char buffer[64];
  // float32 literals print the float32 value; float16 ones the exact value, rounded once by the cast.
  if (t.bits() == 32) {
    std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(static_cast<float>(v)));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
  }
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t.bits() == 32) s += "f";
  if (!cast.empty()) s = "(" + cast + s + ")";
  return v < 0 || std::signbit(v) ? "(" + s + ")" : s;
}

std::string CodeGenC::rounded(DataType t, const std::string& text) const {
  bool narrow = t.is_float() ? t.bits() == 16 : t.is_integer() && t.bits() < 32;
  return narrow ? "((" + scalar_type(t) + ")" + text + ")" : text;
}

std::string CodeGenC::helper(const std::string& op, DataType t) {
  std::string type = scalar_type(t);
  std::string name = "temper_" + op + "_" + t.to_string();
  if (helpers_.count(name)) return name;
  std::string head = str(helper_qualifier(), " ", type, " ", name, "(", type, " a, ", type, " b) {\n");
  std::string definition;
  if (op == "min") {
    definition = head + "  return a < b ? a : b;\n}\n";
  } else if (op == "max") {
    definition = head + "  return a > b ? a : b;\n}\n";
  } else if (op == "floordiv") {
    definition = head + str("  ", type, " q = a / b;\n  ", type,
                            " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;\n}\n");
  } else {
    TEMPER_CHECK(op == "floormod", "unknown helper ", op);
    definition = head + str("  ", type, " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n");
  }
  helpers_[name] = definition;
  return name;
}

std::string CodeGenC::print_node(const IntImmNode* op) {
  return literal(op->dtype, op->value);
}

std::string CodeGenC::print_node(const FloatImmNode* op) {
  return literal(op->dtype, op->value);
}

std::string CodeGenC::print_node(const VarNode* op) {
  auto it = local_names_.find(op);
  TEMPER_CHECK(it != local_names_.end(), "variable ", op->name, " used before it is bound in ", func_name_);
  if (!lane_arrays_.count(op)) return it->second;
  TEMPER_CHECK(!lane_.empty(), "vector variable ", op->name, " used outside a lane loop");
  return it->second + "[" + lane_ + "]";
}

std::string CodeGenC::print_node(const CastNode* op) {
  DataType to = op->dtype.element_of();
  DataType from = op->value.dtype().element_of();
  std::string value = print_expr(op->value);
  if (to.is_bool()) return "(" + value + " != " + literal(from, int64_t{0}) + ")";
  return "((" + scalar_type(to) + ")" + value + ")";
}

std::string CodeGenC::print_node(const NotNode* op) {
  return "(!" + print_expr(op->a) + ")";
}

std::string CodeGenC::print_node(const SelectNode* op) {
  return "(" + print_expr(op->condition) + " ? " + print_expr(op->true_value) + " : " + print_expr(op->false_value) +
         ")";
}

std::string CodeGenC::print_node(const RampNode* op) {
  DataType t = op->dtype.element_of();
  std::string lane = t == DataType::int32() ? lane_ : "(" + scalar_type(t) + ")" + lane_;
  std::string step = is_one(op->stride) ? lane : print_expr(op->stride) + " * " + lane;
  return rounded(t, "(" + print_expr(op->base) + " + " + step + ")");
}

std::string CodeGenC::print_node(const BroadcastNode* op) {
  return print_expr(op->value);
}

std::string CodeGenC::print_node(const LetNode* op) {
  std::string value = print_expr(op->value);
  ScopedName name(*this, op->var);
  return let_expression(scalar_type(op->var.dtype().element_of()), name.name(), value,
                        scalar_type(op->dtype.element_of()), print_expr(op->body));
}

std::string CodeGenC::let_expression(const std::string& type, const std::string& name, const std::string& value,
                                     const std::string&, const std::string& body) const {
  return str("({ ", type, " ", name, " = ", value, "; ", body, "; })");
}

std::string CodeGenC::print_node(const CallNode* op) {
  switch (op->call_kind) {
    case CallKind::Pure:
      return print_math_call(op);
    case CallKind::Extern:
      return print_extern_call(op);
    case CallKind::Intrinsic:
      return print_intrinsic(op);
  }
  return {};
}

std::string CodeGenC::print_intrinsic(const CallNode* op) {
  TEMPER_CHECK(op->name == "address_of", "the C backend cannot print intrinsic ", op->name);
  const auto* load = op->args[0].as<BufferLoadNode>();
  return "((void*)&" + element_ref(load->buffer, flat_index(load->indices)) + ")";
}

std::string CodeGenC::print_math_call(const CallNode* op) {
  DataType t = op->dtype.element_of();
  // float16 math computes in float32.
  DataType compute = t.bits() == 16 ? DataType::float32() : t;
  std::vector<std::string> args;
  for (const Expr& arg : op->args) {
    std::string a = print_expr(arg);
    args.push_back(compute == t ? a : "((float)" + a + ")");
  }
  std::string one = literal(compute, 1.0);
  std::string result;
  if (std::optional<std::string> native = native_math_function(op->name, compute)) {
    result = *native + "(" + join(args, ", ") + ")";
  } else if (op->name == "rsqrt") {
    result = "(" + one + " / " + native_math_function("sqrt", compute).value() + "(" + args[0] + "))";
  } else {
    TEMPER_CHECK(op->name == "sigmoid", "no way to print math function ", op->name);
    result = "(" + one + " / (" + one + " + " + native_math_function("exp", compute).value() + "(-" + args[0] + ")))";
  }
  return compute == t ? result : "((" + scalar_type(t) + ")" + result + ")";
}

std::optional<std::string> CodeGenC::native_math_function(const std::string& name, DataType t) const {
  if (name == "rsqrt" || name == "sigmoid") return std::nullopt;
  return name + (t.bits() == 32 ? "f" : "");
}

std::string CodeGenC::print_extern_call(const CallNode* op) {
  std::vector<std::string> types;
  std::vector<std::string> args;
  for (const Expr& arg : op->args) {
    types.push_back(scalar_type(arg.dtype()));
    args.push_back(print_expr(arg));
  }
  std::string prototype =
      str(scalar_type(op->dtype), " ", op->name, "(", types.empty() ? "void" : join(types, ", "), ");");
  auto [it, inserted] = externs_.emplace(op->name, prototype);
  if (!inserted && it->second != prototype) {
    throw UserError(
        str("extern function ", op->name, " is called with two signatures: '", it->second, "' and '", prototype, "'"));
  }
  return op->name + "(" + join(args, ", ") + ")";
}

std::string CodeGenC::print_node(const BufferLoadNode* op) {
  return print_buffer_load(op);
}

std::string CodeGenC::print_buffer_load(const BufferLoadNode* op) {
  std::string ref = element_ref(op->buffer, flat_index(op->indices));
  return op->buffer->dtype.is_bool() ? "(" + ref + " != 0)" : ref;
}

std::string CodeGenC::print_node(const ReduceNode*) {
  TEMPER_CHECK(false, "a Reduce reached the C backend in ", func_name_);
  return {};
}

std::string CodeGenC::element_ref(const Buffer& b, const Expr& index) {
  auto it = local_names_.find(b.get());
  TEMPER_CHECK(it != local_names_.end(), "buffer ", b->name, " is neither a parameter nor allocated in ", func_name_);
  // Inside a lane's expression the index prints at that lane.
  bool starts_lanes = index.dtype().is_vector() && lane_.empty();
  return it->second + "[" + (starts_lanes ? print_lanes(index) : print_expr(index)) + "]";
}

}  // namespace temper
