#include "compiler/codegen/c/lowered_func_analysis.h"

#include <cctype>
#include <map>
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"

namespace temper {
namespace {

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

class LoweredFormChecker : public IRVisitor {
 public:
  LoweredFormChecker(const std::string& func, const std::set<std::string>& device_intrinsics)
      : func_(func), device_intrinsics_(device_intrinsics) {}
  using IRVisitor::visit;

 protected:
  void visit(const ReduceNode*) override { fail("a Reduce expression"); }
  void visit(const BlockNode* op) override { fail(str("block '", op->name, "'")); }
  void visit(const IfThenElseNode* op) override {
    if (op->condition.dtype().is_vector()) {
      throw UserError(str("function ", func_, ": the condition of an if is a ", op->condition.dtype(),
                          " vector; branch on a scalar (or select between vectors)"));
    }
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    check_alignment(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferLoadNode* op) override {
    check_access(op->buffer, op->indices);
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    check_access(op->buffer, op->indices);
    IRVisitor::visit(op);
  }
  void visit(const CallNode* op) override {
    switch (op->call_kind) {
      case CallKind::Pure:
        check_math_call(op);
        break;
      case CallKind::Extern:
        for (const Expr& arg : op->args) {
          if (arg.dtype().is_vector()) {
            throw UserError(str("function ", func_, ": extern call ", op->name, " has a vector argument (", arg.dtype(),
                                "); extern functions take scalars and pointers"));
          }
        }
        break;
      case CallKind::Intrinsic: {
        if (device_intrinsics_.count(op->name)) {
          if (!op->args.empty()) throw UserError(str("function ", func_, ": ", op->name, " takes no arguments"));
          break;
        }
        const BufferLoadNode* load = op->args.size() == 1 ? op->args[0].as<BufferLoadNode>() : nullptr;
        if (op->name != "address_of") {
          throw UserError(str("function ", func_, ": unknown intrinsic '", op->name, "'; codegen knows address_of"));
        }
        if (!load || load->dtype.is_vector()) {
          throw UserError(str("function ", func_, ": address_of takes one buffer load with a scalar index"));
        }
        break;
      }
    }
    IRVisitor::visit(op);
  }

 public:
  void check_alignment(const Buffer& b) {
    int a = b->alignment;
    if (a < 1 || (a & (a - 1)) != 0) {
      throw UserError(str("function ", func_, ": buffer ", b->name, " has alignment ", a,
                          "; an alignment is a power of two (bytes)"));
    }
  }

 private:
  void check_math_call(const CallNode* op) {
    int arity = math_function_arity(op->name);
    if (arity < 0) {
      throw UserError(str("function ", func_, ": unknown math function '", op->name, "'; the math functions are ",
                          math_function_names()));
    }
    if (static_cast<int>(op->args.size()) != arity) {
      throw UserError(str("function ", func_, ": ", op->name, " takes ", arity, " arguments, got ", op->args.size()));
    }
    for (const Expr& arg : op->args) {
      if (!arg.dtype().is_float() || arg.dtype() != op->dtype) {
        throw UserError(str("function ", func_, ": ", op->name, " of type ", op->dtype, " has an argument of type ",
                            arg.dtype(), "; math functions take float arguments of the result's type"));
      }
    }
  }
  void check_access(const Buffer& b, const std::vector<Expr>& indices) {
    bool flat = indices.size() == 1 || (indices.empty() && b.ndim() == 0);
    if (!flat) {
      throw UserError(str("function ", func_, " accesses buffer ", b->name, " with ", indices.size(),
                          " indices; codegen expects flattened buffers (one index): lower the function first"));
    }
  }
  [[noreturn]] void fail(const std::string& what) {
    throw UserError(
        str("function ", func_, " still contains ", what, "; codegen expects lowered IR: run lower() on it first"));
  }
  std::string func_;
  const std::set<std::string>& device_intrinsics_;
};

// Records the uses of Vars and buffers that a statement does not define itself.
class FreeValueCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::vector<Var> vars;
  std::vector<Buffer> buffers;
  std::set<const VarNode*> bound;
  std::set<const BufferNode*> allocated;

 protected:
  void visit(const Expr& e) override {
    const VarNode* v = e.as<VarNode>();
    if (!v) return IRVisitor::visit(e);
    if (bound.count(v) || !seen_vars_.insert(v).second) return;
    vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.shared())));
  }
  void visit(const ForNode* op) override {
    bound.insert(op->loop_var.get());
    IRVisitor::visit(op);
  }
  void visit(const LetStmtNode* op) override {
    bound.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const LetNode* op) override {
    bound.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    allocated.insert(op->buffer.get());
    for (const Expr& extent : op->buffer->shape) visit(extent);
    IRVisitor::visit(op);
  }
  void visit(const BufferLoadNode* op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }

 private:
  void use(const Buffer& b) {
    if (allocated.count(b.get()) || !seen_buffers_.insert(b.get()).second) return;
    buffers.push_back(b);
  }
  std::set<const VarNode*> seen_vars_;
  std::set<const BufferNode*> seen_buffers_;
};

}  // namespace

void check_lowered(const std::vector<PrimFunc>& funcs, const std::set<std::string>& device_intrinsics) {
  std::set<std::string> names;
  for (const PrimFunc& f : funcs) {
    if (!is_c_identifier(f.name)) {
      throw UserError(str("function name '", f.name, "' is not a C identifier (letters, digits and _)"));
    }
    if (!names.insert(f.name).second) throw UserError(str("two functions are named '", f.name, "'"));
    TEMPER_CHECK(f.body.defined(), "function ", f.name, " has no body");
    LoweredFormChecker checker(f.name, device_intrinsics);
    for (const Buffer& param : f.params) checker.check_alignment(param);
    checker.visit(f.body);
  }
}

ShapeBinding bind_shape_vars(const PrimFunc& f) {
  ShapeBinding binding;
  std::set<const VarNode*> bound;
  for (const Buffer& param : f.params) {
    std::vector<bool>& binds = binding.binds_var.emplace_back();
    for (const Expr& extent : param->shape) {
      const VarNode* v = extent.as<VarNode>();
      bool first = v && bound.insert(v).second;
      binds.push_back(first);
      if (first) binding.shape_vars.push_back(Var(std::static_pointer_cast<const VarNode>(extent.shared())));
    }
  }
  auto check_bound = [&](const Expr& e, const std::string& where) {
    post_order_visit(e, [&](const Node* n) {
      if (n->kind == NodeKind::Var && !bound.count(static_cast<const VarNode*>(n))) {
        throw UserError(str("function ", f.name, ": variable ", static_cast<const VarNode*>(n)->name, " in ", where,
                            " is not bound by any parameter's shape; give some parameter a dimension of extent ",
                            static_cast<const VarNode*>(n)->name));
      }
    });
  };
  for (const Buffer& param : f.params) {
    for (const Expr& extent : param->shape) check_bound(extent, str("the shape of ", param->name));
  }
  FreeValueCollector body_uses;
  body_uses.visit(f.body);
  for (const Var& v : body_uses.vars) check_bound(v, "the body");
  return binding;
}

Captures loop_body_captures(const ForNode* loop) {
  FreeValueCollector uses;
  uses.bound.insert(loop->loop_var.get());
  uses.visit(loop->body);
  return Captures{uses.vars, uses.buffers};
}

bool allocate_on_stack(const Buffer& buffer) {
  constexpr int64_t kMaxLocalStackBytes = 256 * 1024;
  constexpr int64_t kMaxOtherStackBytes = 1024;
  int64_t bytes = buffer->dtype.bytes();
  for (const Expr& extent : buffer->shape) {
    const int64_t* n = as_const_int(extent);
    if (!n) return false;
    bytes *= *n;
  }
  return bytes <= (buffer->scope == "local" ? kMaxLocalStackBytes : kMaxOtherStackBytes);
}

Expr buffer_elements(const Buffer& buffer) {
  Expr elements;
  for (const Expr& extent : buffer->shape) {
    const int64_t* n = as_const_int(extent);
    Expr e = n ? make_const(DataType::int64(), *n) : cast(DataType::int64(), extent);
    elements = elements.defined() ? elements * e : e;
  }
  return elements.defined() ? elements : make_const(DataType::int64(), int64_t{1});
}

Expr flat_index(const std::vector<Expr>& indices) {
  TEMPER_CHECK(indices.size() <= 1, "access with ", indices.size(), " indices reached codegen");
  return indices.empty() ? Expr(0) : indices[0];
}

}  // namespace temper
