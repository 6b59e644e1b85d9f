#include "compiler/ir/verifier.h"

#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"

namespace temper {
namespace {

class Verifier : public IRVisitor {
 public:
  Verifier(const PrimFunc& f, std::string after_pass, bool lowered)
      : func_(f), after_pass_(std::move(after_pass)), lowered_(lowered) {}

  void run() {
    for (const Buffer& b : func_.params) {
      if (!buffers_.insert(b.get()).second) fail("parameter ", b->name, " appears twice");
      // Symbolic dimensions of parameters are the function's free variables.
      for (const Expr& d : b->shape) {
        post_order_visit(d, [&](const Node* n) {
          if (n->kind == NodeKind::Var) vars_.insert(static_cast<const VarNode*>(n));
        });
      }
    }
    if (!func_.body.defined()) fail("the body is undefined");
    visit(func_.body);
  }

  using IRVisitor::visit;

  void visit(const Expr& e) override {
    if (!e.defined()) fail("an undefined expression");
    dispatch(e.get(), [&](const auto* op) {
      if constexpr (requires {
                      op->a;
                      op->b;
                    })
        check_binary(op, e);
    });
    IRVisitor::visit(e);
  }

  void visit(const Stmt& s) override {
    if (!s.defined()) fail("an undefined statement");
    IRVisitor::visit(s);
  }

 protected:
  void visit(const VarNode* op) override {
    if (!vars_.count(op)) fail("variable ", op->name, " is used where no loop, let or block binds it");
  }

  void visit(const CastNode* op) override {
    if (op->dtype.lanes() != op->value.dtype().lanes()) fail("cast changes the lane count: ", expr(op));
    IRVisitor::visit(op);
  }

  void visit(const NotNode* op) override {
    if (!op->a.dtype().is_bool() || op->dtype != op->a.dtype()) fail("'!' of a non-bool: ", expr(op));
    IRVisitor::visit(op);
  }

  void visit(const SelectNode* op) override {
    DataType t = op->true_value.dtype();
    if (!op->condition.dtype().is_bool() || op->condition.dtype().lanes() != t.lanes()) {
      fail("select condition ", op->condition, " must be bool with ", t.lanes(), " lanes");
    }
    if (op->false_value.dtype() != t || op->dtype != t) fail("select branches of different types: ", expr(op));
    IRVisitor::visit(op);
  }

  void visit(const RampNode* op) override {
    if (!op->base.dtype().is_scalar() || op->stride.dtype() != op->base.dtype() || op->lanes <= 1 ||
        op->dtype != op->base.dtype().with_lanes(op->lanes)) {
      fail("malformed ramp ", expr(op), " of type ", op->dtype);
    }
    IRVisitor::visit(op);
  }

  void visit(const BroadcastNode* op) override {
    if (!op->value.dtype().is_scalar() || op->dtype != op->value.dtype().with_lanes(op->lanes)) {
      fail("malformed broadcast ", expr(op), " of type ", op->dtype);
    }
    IRVisitor::visit(op);
  }

  void visit(const LetNode* op) override {
    visit(op->value);
    if (op->var.dtype() != op->value.dtype()) fail("let ", op->var->name, " has a value of another type");
    bind(op->var);
    visit(op->body);
    unbind(op->var);
  }

  void visit(const BufferLoadNode* op) override {
    check_access(op->buffer, op->indices, "load");
    int lanes = op->indices.empty() ? 1 : op->indices[0].dtype().lanes();
    if (op->dtype != op->buffer->dtype.with_lanes(lanes)) {
      fail("load of ", op->buffer->name, " has type ", op->dtype, " but the buffer holds ", op->buffer->dtype);
    }
    IRVisitor::visit(op);
  }

  void visit(const ReduceNode* op) override { fail("a Reduce is left in the function: ", expr(op)); }

  void visit(const BufferStoreNode* op) override {
    check_access(op->buffer, op->indices, "store");
    int lanes = op->indices.empty() ? 1 : op->indices[0].dtype().lanes();
    if (op->value.dtype() != op->buffer->dtype.with_lanes(lanes)) {
      fail("store into ", op->buffer->name, " of a ", op->value.dtype(), " value; expected ",
           op->buffer->dtype.with_lanes(lanes));
    }
    IRVisitor::visit(op);
  }

  void visit(const LetStmtNode* op) override {
    visit(op->value);
    if (op->var.dtype() != op->value.dtype()) fail("let ", op->var->name, " has a value of another type");
    bind(op->var);
    visit(op->body);
    unbind(op->var);
  }

  void visit(const ForNode* op) override {
    visit(op->min);
    visit(op->extent);
    DataType t = op->loop_var.dtype();
    if (!t.is_integer() || !t.is_scalar() || op->min.dtype() != t || op->extent.dtype() != t) {
      fail("loop ", op->loop_var->name, " has bounds of type ", op->min.dtype(), "/", op->extent.dtype(),
           " for a variable of type ", t, "; loop bounds must be integers of the variable's type");
    }
    if (lowered_ && op->for_kind != ForKind::Serial && op->for_kind != ForKind::Parallel &&
        op->for_kind != ForKind::ThreadBinding) {
      fail("loop ", op->loop_var->name, " is still ", for_kind_name(op->for_kind));
    }
    if (op->for_kind == ForKind::ThreadBinding && op->thread_tag.empty()) {
      fail("thread-bound loop ", op->loop_var->name, " has no thread tag");
    }
    bind(op->loop_var);
    visit(op->body);
    unbind(op->loop_var);
  }

  void visit(const IfThenElseNode* op) override {
    check_condition(op->condition, "if");
    visit(op->condition);
    visit(op->then_case);
    if (op->else_case.defined()) visit(op->else_case);
  }

  void visit(const AllocateNode* op) override {
    for (const Expr& d : op->buffer->shape) visit(d);
    if (lowered_ && op->buffer.ndim() != 1) {
      fail("allocation of ", op->buffer->name, " has ", op->buffer.ndim(), " dimensions; lowered IR allocates flat");
    }
    allocate(op->buffer);
    visit(op->body);
    buffers_.erase(op->buffer.get());
  }

  void visit(const BlockRealizeNode* op) override {
    if (lowered_) fail("a block is left in lowered IR");
    auto* block = op->block.as<BlockNode>();
    if (!block) fail("a BlockRealize holds no Block");
    if (op->iter_values.size() != block->iter_vars.size()) {
      fail("block ", block->name, " has ", block->iter_vars.size(), " iteration variables but ", op->iter_values.size(),
           " bindings");
    }
    for (const Expr& v : op->iter_values) visit(v);
    check_condition(op->predicate, "block predicate");
    visit(op->predicate);
    visit(op->block);
  }

  void visit(const BlockNode* op) override {
    if (lowered_) fail("a block is left in lowered IR");
    for (const IterVar& iv : op->iter_vars) {
      visit(iv.dom.min);
      visit(iv.dom.extent);
    }
    for (const IterVar& iv : op->iter_vars) bind(iv.var);
    for (const Buffer& b : op->alloc_buffers) allocate(b);
    for (const auto* regions : {&op->reads, &op->writes}) {
      for (const BufferRegion& r : *regions) {
        if (!buffers_.count(r.buffer.get()))
          fail("block ", op->name, " names buffer ", r.buffer->name, " out of scope");
        if (static_cast<int>(r.region.size()) != r.buffer.ndim()) {
          fail("block ", op->name, ": a region of ", r.buffer->name, " has ", r.region.size(), " ranges for ",
               r.buffer.ndim(), " dimensions");
        }
        for (const Range& range : r.region) {
          visit(range.min);
          visit(range.extent);
        }
      }
    }
    if (op->init.defined()) visit(op->init);
    visit(op->body);
    for (const Buffer& b : op->alloc_buffers) buffers_.erase(b.get());
    for (const IterVar& iv : op->iter_vars) unbind(iv.var);
  }

 private:
  const PrimFunc& func_;
  std::string after_pass_;
  bool lowered_;
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;

  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) {
    throw InternalError(
        str("IR verification failed after pass '", after_pass_, "' in function ", func_.name, ": ", args...));
  }

  template <typename T>
  static std::string expr(const T* op) {
    std::shared_ptr<const T> alias(std::shared_ptr<const T>{}, op);
    return to_string(Expr(std::static_pointer_cast<const ExprNode>(alias)));
  }

  void bind(const Var& v) {
    if (!vars_.insert(v.get()).second) fail("variable ", v->name, " is bound again inside its own scope");
  }
  void unbind(const Var& v) { vars_.erase(v.get()); }

  void allocate(const Buffer& b) {
    if (!buffers_.insert(b.get()).second) fail("buffer ", b->name, " is allocated again inside its own scope");
  }

  void check_condition(const Expr& c, const char* what) {
    if (!c.defined() || !c.dtype().is_bool() || !c.dtype().is_scalar()) {
      fail(what, " condition ", c, " must be a scalar bool");
    }
  }

  void check_access(const Buffer& b, const std::vector<Expr>& indices, const char* what) {
    if (!buffers_.count(b.get())) {
      fail(what, " of buffer ", b->name, ", which is neither a parameter nor allocated in scope");
    }
    int n = static_cast<int>(indices.size());
    if (lowered_ && n != 1) fail(what, " of ", b->name, " has ", n, " indices; lowered IR uses one flat index");
    if (n != b.ndim() && n != 1) {
      fail(what, " of ", b->name, " has ", n, " indices but the buffer has ", b.ndim(), " dimensions");
    }
    for (const Expr& i : indices) {
      if (!i.defined() || !i.dtype().is_integer()) fail(what, " of ", b->name, " has a non-integer index");
      if (i.dtype().lanes() != indices[0].dtype().lanes()) fail(what, " of ", b->name, " mixes index lane counts");
    }
  }

  template <typename T>
  void check_binary(const T* op, const Expr& e) {
    DataType ta = op->a.dtype();
    DataType tb = op->b.dtype();
    if (ta != tb) fail("operands of ", node_kind_name(e.kind()), " differ in type (", ta, " vs ", tb, "): ", e);
    if ((e.kind() == NodeKind::And || e.kind() == NodeKind::Or) && !ta.is_bool()) {
      fail(node_kind_name(e.kind()), " of non-bool operands: ", e);
    }
    DataType expected = binary_result_type(e.kind(), ta);
    if (op->dtype != expected)
      fail(node_kind_name(e.kind()), " has type ", op->dtype, ", expected ", expected, ": ", e);
  }
};

}  // namespace

void verify(const PrimFunc& f, const std::string& after_pass) {
  Verifier(f, after_pass, false).run();
}

void verify_lowered(const PrimFunc& f, const std::string& after_pass) {
  Verifier(f, after_pass, true).run();
}

}  // namespace temper
