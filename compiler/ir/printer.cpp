#include "compiler/ir/printer.h"

#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <unordered_map>

namespace temper {
namespace {

// Binding strength, loosest first; an operand binding looser than its parent is
// parenthesised.
enum Prec { kOr = 1, kAnd, kCompare, kAdd, kMul, kUnary, kAtom };

class Printer {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}

  void print_func(const PrimFunc& f) {
    os_ << "func " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i) os_ << ", ";
      print_buffer_decl(f.params[i]);
    }
    os_ << ") {\n";
    ++indent_;
    print_stmt(f.body);
    --indent_;
    os_ << "}\n";
  }

  void print_buffer_decl(const Buffer& b) {
    os_ << name_of(b) << ": " << b->dtype << "[";
    print_list(b->shape);
    os_ << "]";
    if (b->scope != "global") os_ << " in " << b->scope;
  }

  void print_expr(const Expr& e, int parent = 0) {
    if (!e.defined()) {
      os_ << "<undefined>";
      return;
    }
    int p = precedence(e);
    bool paren = p < parent;
    if (paren) os_ << "(";
    print_expr_body(e);
    if (paren) os_ << ")";
  }

  void print_stmt(const Stmt& s) {
    if (!s.defined()) return;
    dispatch(s.get(), [&](const auto* op) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
      if constexpr (std::is_base_of_v<StmtNode, T>) print(op);
    });
  }

 private:
  std::ostream& os_;
  int indent_ = 0;
  std::unordered_map<const void*, std::string> names_;
  std::set<std::string> used_;

  std::string unique(const void* key, const std::string& base) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string n = base.empty() ? "v" : base;
    for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_.insert(n);
    return names_[key] = n;
  }
  std::string name_of(const Var& v) { return unique(v.get(), v.name()); }
  std::string name_of(const Buffer& b) { return unique(b.get(), b->name); }

  void line() { os_ << std::string(2 * indent_, ' '); }

  void print_list(const std::vector<Expr>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) os_ << ", ";
      print_expr(v[i]);
    }
  }

  static int precedence(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::Or: return kOr;
      case NodeKind::And: return kAnd;
      case NodeKind::EQ: case NodeKind::NE: case NodeKind::LT:
      case NodeKind::LE: case NodeKind::GT: case NodeKind::GE: return kCompare;
      case NodeKind::Add: case NodeKind::Sub: return kAdd;
      case NodeKind::Mul: case NodeKind::FloorDiv: case NodeKind::FloorMod: return kMul;
      case NodeKind::Div: return e.dtype().is_float() ? kMul : kAtom;
      case NodeKind::Not: return kUnary;
      case NodeKind::IntImm: return as_const_int(e) && *as_const_int(e) < 0 ? kUnary : kAtom;
      default: return kAtom;
    }
  }

  static const char* infix(NodeKind k) {
    switch (k) {
      case NodeKind::Add: return " + ";
      case NodeKind::Sub: return " - ";
      case NodeKind::Mul: return " * ";
      case NodeKind::Div: return " / ";
      case NodeKind::FloorDiv: return " // ";
      case NodeKind::FloorMod: return " % ";
      case NodeKind::EQ: return " == ";
      case NodeKind::NE: return " != ";
      case NodeKind::LT: return " < ";
      case NodeKind::LE: return " <= ";
      case NodeKind::GT: return " > ";
      case NodeKind::GE: return " >= ";
      case NodeKind::And: return " && ";
      case NodeKind::Or: return " || ";
      default: return nullptr;
    }
  }

  void print_expr_body(const Expr& e) {
    dispatch(e.get(), [&](const auto* op) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
      if constexpr (std::is_base_of_v<ExprNode, T>) print(op, e);
    });
  }

  template <NodeKind K>
  void print(const BinaryNode<K>* op, const Expr& e) {
    const char* sym = infix(K);
    bool int_div = (K == NodeKind::Div) && !op->dtype.is_float();
    if (sym && !int_div) {
      int p = precedence(e);
      print_expr(op->a, p);
      os_ << sym;
      // Left-associative: a right operand of equal precedence needs parentheses.
      print_expr(op->b, p + 1);
      return;
    }
    const char* fn = K == NodeKind::Min ? "min" : K == NodeKind::Max ? "max" : K == NodeKind::Div ? "truncdiv" : "truncmod";
    os_ << fn << "(";
    print_expr(op->a);
    os_ << ", ";
    print_expr(op->b);
    os_ << ")";
  }

  void print(const IntImmNode* op, const Expr&) {
    if (op->dtype.is_bool()) {
      os_ << (op->value ? "True" : "False");
    } else if (op->dtype == DataType::int32()) {
      os_ << op->value;
    } else {
      os_ << op->dtype << "(" << op->value << ")";
    }
  }
  void print(const FloatImmNode* op, const Expr&) {
    std::ostringstream v;
    if (std::isinf(op->value)) {
      v << (op->value < 0 ? "-inf" : "inf");
    } else {
      v << std::setprecision(9) << op->value;
      if (v.str().find_first_of(".e") == std::string::npos) v << ".0";
    }
    if (op->dtype == DataType::float32() && !std::isinf(op->value)) {
      os_ << v.str() << "f";
    } else {
      os_ << op->dtype << "(" << v.str() << ")";
    }
  }
  void print(const VarNode* op, const Expr& e) { os_ << name_of(Var(std::static_pointer_cast<const VarNode>(e.shared()))); (void)op; }
  void print(const CastNode* op, const Expr&) {
    os_ << op->dtype << "(";
    print_expr(op->value);
    os_ << ")";
  }
  void print(const NotNode* op, const Expr&) {
    os_ << "!";
    print_expr(op->a, kUnary);
  }
  void print(const SelectNode* op, const Expr&) {
    os_ << "select(";
    print_expr(op->condition);
    os_ << ", ";
    print_expr(op->true_value);
    os_ << ", ";
    print_expr(op->false_value);
    os_ << ")";
  }
  void print(const RampNode* op, const Expr&) {
    os_ << "ramp(";
    print_expr(op->base);
    os_ << ", ";
    print_expr(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void print(const BroadcastNode* op, const Expr&) {
    os_ << "broadcast(";
    print_expr(op->value);
    os_ << ", " << op->lanes << ")";
  }
  void print(const LetNode* op, const Expr&) {
    os_ << "(let " << name_of(op->var) << " = ";
    print_expr(op->value);
    os_ << " in ";
    print_expr(op->body);
    os_ << ")";
  }
  void print(const CallNode* op, const Expr&) {
    if (op->call_kind == CallKind::Extern) os_ << "extern ";
    os_ << op->name << "(";
    print_list(op->args);
    os_ << ")";
  }
  void print(const BufferLoadNode* op, const Expr&) {
    os_ << name_of(op->buffer) << "[";
    print_list(op->indices);
    os_ << "]";
  }
  void print(const ReduceNode* op, const Expr&) {
    os_ << reduce_op_name(op->op) << "(";
    print_expr(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axis.size(); ++i) {
      if (i) os_ << ", ";
      print_iter_dom(op->axis[i]);
    }
    os_ << "]";
    if (op->condition.defined()) {
      os_ << ", where=";
      print_expr(op->condition);
    }
    os_ << ")";
  }

  void print_iter_dom(const IterVar& iv) {
    os_ << name_of(iv.var) << " in ";
    if (iv.kind == IterKind::Reduce) os_ << "reduce";
    os_ << "[";
    print_range(iv.dom);
    os_ << "]";
  }

  void print_range(const Range& r) {
    if (is_one(r.extent)) {
      print_expr(r.min);
      return;
    }
    print_expr(r.min);
    os_ << ":";
    if (is_zero(r.min)) {
      print_expr(r.extent);
    } else {
      print_expr(r.min + r.extent);
    }
  }

  void print_annotations(const Annotations& ann) {
    if (ann.empty()) return;
    os_ << " [";
    bool first = true;
    for (const auto& [k, v] : ann) {
      if (!first) os_ << ", ";
      first = false;
      os_ << k << "=";
      if (auto* i = std::get_if<int64_t>(&v)) {
        os_ << *i;
      } else {
        os_ << '"' << std::get<std::string>(v) << '"';
      }
    }
    os_ << "]";
  }

  void print_regions(const char* label, const std::vector<BufferRegion>& regions) {
    if (regions.empty()) return;
    line();
    os_ << label << " ";
    for (size_t i = 0; i < regions.size(); ++i) {
      if (i) os_ << ", ";
      os_ << name_of(regions[i].buffer) << "[";
      for (size_t d = 0; d < regions[i].region.size(); ++d) {
        if (d) os_ << ", ";
        print_range(regions[i].region[d]);
      }
      os_ << "]";
    }
    os_ << "\n";
  }

  void print_body(const Stmt& s) {
    ++indent_;
    print_stmt(s);
    --indent_;
  }

  void print(const BufferStoreNode* op) {
    line();
    os_ << name_of(op->buffer) << "[";
    print_list(op->indices);
    os_ << "] = ";
    print_expr(op->value);
    os_ << "\n";
  }
  void print(const EvaluateNode* op) {
    line();
    print_expr(op->value);
    os_ << "\n";
  }
  void print(const LetStmtNode* op) {
    line();
    os_ << "let " << name_of(op->var) << " = ";
    print_expr(op->value);
    os_ << "\n";
    print_stmt(op->body);
  }
  void print(const ForNode* op) {
    line();
    if (op->for_kind != ForKind::Serial) os_ << for_kind_name(op->for_kind) << " ";
    os_ << "for (" << name_of(op->loop_var) << ", ";
    print_expr(op->min);
    os_ << ", ";
    print_expr(op->extent);
    os_ << ")";
    if (!op->thread_tag.empty()) os_ << " bind(\"" << op->thread_tag << "\")";
    print_annotations(op->annotations);
    os_ << " {\n";
    print_body(op->body);
    line();
    os_ << "}\n";
  }
  void print(const IfThenElseNode* op) {
    line();
    os_ << "if (";
    print_expr(op->condition);
    os_ << ") {\n";
    print_body(op->then_case);
    if (op->else_case.defined()) {
      line();
      os_ << "} else {\n";
      print_body(op->else_case);
    }
    line();
    os_ << "}\n";
  }
  void print(const SeqStmtNode* op) {
    for (const Stmt& s : op->seq) print_stmt(s);
  }
  void print(const AllocateNode* op) {
    line();
    os_ << "allocate ";
    print_buffer_decl(op->buffer);
    os_ << "\n";
    print_stmt(op->body);
  }
  void print(const BlockNode* op) { print_block(op, nullptr); }
  void print(const BlockRealizeNode* op) { print_block(op->block.as<BlockNode>(), op); }

  void print_block(const BlockNode* b, const BlockRealizeNode* realize) {
    line();
    os_ << "block " << b->name << "(";
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (i) os_ << ", ";
      print_iter_dom(b->iter_vars[i]);
      if (realize) {
        os_ << " = ";
        print_expr(realize->iter_values[i]);
      }
    }
    os_ << ")";
    if (realize && !is_one(realize->predicate)) {
      os_ << " where ";
      print_expr(realize->predicate);
    }
    print_annotations(b->annotations);
    os_ << " {\n";
    ++indent_;
    print_regions("reads", b->reads);
    print_regions("writes", b->writes);
    for (const Buffer& a : b->alloc_buffers) {
      line();
      os_ << "alloc ";
      print_buffer_decl(a);
      os_ << "\n";
    }
    if (b->init.defined()) {
      line();
      os_ << "init {\n";
      print_body(b->init);
      line();
      os_ << "}\n";
    }
    print_stmt(b->body);
    --indent_;
    line();
    os_ << "}\n";
  }
};

}  // namespace

std::string to_string(const Expr& e) {
  std::ostringstream os;
  Printer(os).print_expr(e);
  return os.str();
}
std::string to_string(const Stmt& s) {
  std::ostringstream os;
  Printer(os).print_stmt(s);
  return os.str();
}
std::string to_string(const PrimFunc& f) {
  std::ostringstream os;
  Printer(os).print_func(f);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << to_string(f); }
std::ostream& operator<<(std::ostream& os, const Buffer& b) {
  std::ostringstream s;
  Printer(s).print_buffer_decl(b);
  return os << s.str();
}

}  // namespace temper
