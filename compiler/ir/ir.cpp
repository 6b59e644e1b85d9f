#include "compiler/ir/ir.h"

#include <cmath>
#include <limits>

#include "compiler/ir/printer.h"

namespace temper {

const char* node_kind_name(NodeKind k) {
  switch (k) {
#define TEMPER_NAME(n) \
  case NodeKind::n:    \
    return #n;
    TEMPER_EXPR_NODES(TEMPER_NAME)
    TEMPER_STMT_NODES(TEMPER_NAME)
#undef TEMPER_NAME
  }
  return "?";
}

Expr::Expr(int v) : Expr(make_const(DataType::int32(), int64_t{v})) {}
Expr::Expr(int64_t v) : Expr(make_const(DataType::int64(), v)) {}
Expr::Expr(float v) : Expr(make_const(DataType::float32(), double{v})) {}
Expr::Expr(double v) : Expr(make_const(DataType::float32(), v)) {}

Var::Var(std::string name, DataType t) : Expr(std::make_shared<const VarNode>(t, std::move(name))) {}
Var::Var(std::shared_ptr<const VarNode> p) : Expr(std::move(p)) {}
const VarNode* Var::get() const { return static_cast<const VarNode*>(Expr::get()); }
const std::string& Var::name() const { return get()->name; }

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope)
    : ptr_(std::make_shared<const BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), std::move(scope)})) {}

Buffer Buffer::with_name(const std::string& name) const {
  auto n = std::make_shared<BufferNode>(*ptr_);
  n->name = name;
  return Buffer(std::move(n));
}
Buffer Buffer::with_shape(std::vector<Expr> shape) const {
  auto n = std::make_shared<BufferNode>(*ptr_);
  n->shape = std::move(shape);
  return Buffer(std::move(n));
}
Buffer Buffer::with_scope(const std::string& scope) const {
  auto n = std::make_shared<BufferNode>(*ptr_);
  n->scope = scope;
  return Buffer(std::move(n));
}

Expr make_const(DataType t, int64_t v) {
  if (t.is_float()) return make_const(t, static_cast<double>(v));
  if (t.is_vector()) return broadcast(make_const(t.element_of(), v), t.lanes());
  return Expr(std::make_shared<const IntImmNode>(t, v));
}

Expr make_const(DataType t, double v) {
  if (!t.is_float()) return make_const(t, static_cast<int64_t>(v));
  if (t.is_vector()) return broadcast(make_const(t.element_of(), v), t.lanes());
  return Expr(std::make_shared<const FloatImmNode>(t, v));
}

Expr make_bool(bool v) { return make_const(DataType::boolean(), int64_t{v}); }

Expr cast(DataType t, Expr v) {
  if (v.dtype() == t) return v;
  if (t.lanes() != v.dtype().lanes()) {
    if (v.dtype().is_scalar()) return broadcast(cast(t.element_of(), v), t.lanes());
    throw UserError(str("cannot cast ", v, " of type ", v.dtype(), " to ", t, ": lane counts differ"));
  }
  return Expr(std::make_shared<const CastNode>(t, std::move(v)));
}

namespace {

bool is_literal(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

// Brings a and b to one type: a literal takes the other side's type, a scalar is
// broadcast to the other side's lanes; anything else must already agree.
void unify(const char* op, Expr& a, Expr& b) {
  TEMPER_CHECK(a.defined() && b.defined(), "operand of ", op, " is undefined");
  DataType ta = a.dtype();
  DataType tb = b.dtype();
  if (ta == tb) return;
  if (ta.element_of() != tb.element_of()) {
    if (is_literal(b) && !(tb.is_float() && !ta.is_float())) {
      b = make_const_like(ta.element_of(), b);
    } else if (is_literal(a) && !(ta.is_float() && !tb.is_float())) {
      a = make_const_like(tb.element_of(), a);
    } else {
      throw UserError(str("mismatched dtypes in '", op, "': ", a, " is ", ta, " but ", b, " is ", tb,
                          "; insert a cast so both sides have one type"));
    }
  }
  if (a.dtype().lanes() != b.dtype().lanes()) {
    if (a.dtype().is_scalar()) {
      a = broadcast(a, b.dtype().lanes());
    } else if (b.dtype().is_scalar()) {
      b = broadcast(b, a.dtype().lanes());
    } else {
      throw UserError(str("mismatched vector lanes in '", op, "': ", a.dtype(), " vs ", b.dtype()));
    }
  }
}

}  // namespace

Expr make_const_like(DataType t, const Expr& literal) {
  if (auto i = literal.as<IntImmNode>()) return make_const(t, i->value);
  if (auto f = literal.as<FloatImmNode>()) return make_const(t, f->value);
  TEMPER_CHECK(false, "not a literal: ", literal);
  return {};
}

bool is_comparison(NodeKind kind) {
  switch (kind) {
    case NodeKind::EQ:
    case NodeKind::NE:
    case NodeKind::LT:
    case NodeKind::LE:
    case NodeKind::GT:
    case NodeKind::GE:
      return true;
    default:
      return false;
  }
}

DataType binary_result_type(NodeKind kind, DataType t) {
  return is_comparison(kind) ? DataType::boolean().with_lanes(t.lanes()) : t;
}

Expr make_binary(NodeKind kind, Expr a, Expr b) {
  unify(node_kind_name(kind), a, b);
  DataType t = a.dtype();
  switch (kind) {
    case NodeKind::And:
    case NodeKind::Or:
      if (!t.is_bool()) throw UserError(str("'", node_kind_name(kind), "' needs bool operands, got ", t));
      break;
    case NodeKind::Mod:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
      if (!t.is_integer()) throw UserError(str("'", node_kind_name(kind), "' needs integer operands, got ", t));
      break;
    default:
      if (!is_comparison(kind) && (t.is_bool() || t.is_handle())) {
        throw UserError(str("arithmetic '", node_kind_name(kind), "' on ", t, " operands: ", a, ", ", b));
      }
  }
  t = binary_result_type(kind, t);
  switch (kind) {
#define TEMPER_MAKE(n) \
  case NodeKind::n:    \
    return Expr(std::make_shared<const n##Node>(t, std::move(a), std::move(b)));
    TEMPER_BINARY_NODES(TEMPER_MAKE)
#undef TEMPER_MAKE
    default:
      TEMPER_CHECK(false, "not a binary node: ", node_kind_name(kind));
  }
  return {};
}

Expr operator+(Expr a, Expr b) { return make_binary(NodeKind::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(NodeKind::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(NodeKind::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return make_binary(NodeKind::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return make_binary(NodeKind::Mod, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return make_const_like(a.dtype().element_of(), Expr(0)) - a; }
Expr operator==(Expr a, Expr b) { return make_binary(NodeKind::EQ, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return make_binary(NodeKind::NE, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return make_binary(NodeKind::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return make_binary(NodeKind::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return make_binary(NodeKind::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return make_binary(NodeKind::GE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return make_binary(NodeKind::And, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return make_binary(NodeKind::Or, std::move(a), std::move(b)); }
Expr operator!(Expr a) {
  if (!a.dtype().is_bool()) throw UserError(str("'!' needs a bool operand, got ", a.dtype()));
  DataType t = a.dtype();
  return Expr(std::make_shared<const NotNode>(t, std::move(a)));
}
Expr floordiv(Expr a, Expr b) { return make_binary(NodeKind::FloorDiv, std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return make_binary(NodeKind::FloorMod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return make_binary(NodeKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(NodeKind::Max, std::move(a), std::move(b)); }

Expr select(Expr cond, Expr t, Expr f) {
  unify("select", t, f);
  if (!cond.dtype().is_bool()) throw UserError(str("select condition ", cond, " must be bool, got ", cond.dtype()));
  if (cond.dtype().lanes() != t.dtype().lanes()) {
    if (cond.dtype().is_scalar()) {
      cond = broadcast(cond, t.dtype().lanes());
    } else {
      throw UserError(str("select condition has ", cond.dtype().lanes(), " lanes, values have ", t.dtype().lanes()));
    }
  }
  DataType type = t.dtype();
  return Expr(std::make_shared<const SelectNode>(type, std::move(cond), std::move(t), std::move(f)));
}

Expr ramp(Expr base, Expr stride, int lanes) {
  TEMPER_CHECK(lanes > 1 && base.dtype().is_scalar(), "bad ramp");
  unify("ramp", base, stride);
  DataType t = base.dtype().with_lanes(lanes);
  return Expr(std::make_shared<const RampNode>(t, std::move(base), std::move(stride), lanes));
}

Expr broadcast(Expr value, int lanes) {
  TEMPER_CHECK(lanes >= 1 && value.dtype().is_scalar(), "bad broadcast of ", value, " to ", lanes);
  if (lanes == 1) return value;
  DataType t = value.dtype().with_lanes(lanes);
  return Expr(std::make_shared<const BroadcastNode>(t, std::move(value), lanes));
}

Expr let(Var v, Expr value, Expr body) {
  if (v.dtype() != value.dtype()) throw UserError(str("let ", v, " of type ", v.dtype(), " bound to ", value.dtype()));
  DataType t = body.dtype();
  return Expr(std::make_shared<const LetNode>(t, std::move(v), std::move(value), std::move(body)));
}

namespace {
void check_indices(const Buffer& b, const std::vector<Expr>& indices, const char* what) {
  // One index is also accepted: a flat element offset (the form after flatten_buffers).
  if (static_cast<int>(indices.size()) != b.ndim() && indices.size() != 1) {
    throw UserError(str(what, " of ", b->name, " has ", indices.size(), " indices but the buffer has ", b.ndim(),
                        " dimensions"));
  }
  for (const Expr& i : indices) {
    if (!i.defined() || !i.dtype().is_integer()) {
      throw UserError(str(what, " of ", b->name, ": index ", i, " is not an integer (", i.dtype(), ")"));
    }
  }
}
int index_lanes(const std::vector<Expr>& indices) {
  int lanes = 1;
  for (const Expr& i : indices) lanes = std::max(lanes, i.dtype().lanes());
  return lanes;
}
}  // namespace

Expr load(Buffer b, std::vector<Expr> indices) {
  check_indices(b, indices, "load");
  DataType t = b->dtype.with_lanes(index_lanes(indices));
  return Expr(std::make_shared<const BufferLoadNode>(t, std::move(b), std::move(indices)));
}

Expr call_pure(DataType t, const std::string& name, std::vector<Expr> args) {
  return Expr(std::make_shared<const CallNode>(t, CallKind::Pure, name, std::move(args)));
}
Expr call_extern(DataType t, const std::string& name, std::vector<Expr> args) {
  return Expr(std::make_shared<const CallNode>(t, CallKind::Extern, name, std::move(args)));
}
Expr call_intrinsic(DataType t, const std::string& name, std::vector<Expr> args) {
  return Expr(std::make_shared<const CallNode>(t, CallKind::Intrinsic, name, std::move(args)));
}

Stmt store(Buffer b, Expr value, std::vector<Expr> indices) {
  check_indices(b, indices, "store");
  int lanes = index_lanes(indices);
  if (value.dtype().element_of() != b->dtype) {
    if (is_literal(value)) {
      value = make_const_like(b->dtype, value);
    } else {
      throw UserError(str("store of ", value.dtype(), " value ", value, " into ", b->dtype, " buffer ", b->name,
                          "; cast the value to ", b->dtype));
    }
  }
  if (value.dtype().lanes() != lanes) {
    if (value.dtype().is_scalar()) {
      value = broadcast(value, lanes);
    } else {
      throw UserError(str("store into ", b->name, ": value has ", value.dtype().lanes(), " lanes, index has ", lanes));
    }
  }
  return Stmt(std::make_shared<const BufferStoreNode>(std::move(b), std::move(value), std::move(indices)));
}

Stmt evaluate(Expr v) { return Stmt(std::make_shared<const EvaluateNode>(std::move(v))); }

Stmt let_stmt(Var v, Expr value, Stmt body) {
  if (v.dtype() != value.dtype()) throw UserError(str("let ", v, " of type ", v.dtype(), " bound to ", value.dtype()));
  return Stmt(std::make_shared<const LetStmtNode>(std::move(v), std::move(value), std::move(body)));
}

Stmt make_for(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag, Annotations ann) {
  if (min.dtype() != v.dtype() && is_literal(min)) min = make_const_like(v.dtype(), min);
  if (extent.dtype() != v.dtype() && is_literal(extent)) extent = make_const_like(v.dtype(), extent);
  return Stmt(std::make_shared<const ForNode>(std::move(v), std::move(min), std::move(extent), kind, std::move(body),
                                              std::move(thread_tag), std::move(ann)));
}

Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case) {
  if (!cond.dtype().is_bool()) throw UserError(str("if condition ", cond, " must be bool, got ", cond.dtype()));
  return Stmt(std::make_shared<const IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (auto* sq = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), sq->seq.begin(), sq->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<const SeqStmtNode>(std::move(flat)));
}

Stmt allocate(Buffer b, Stmt body) { return Stmt(std::make_shared<const AllocateNode>(std::move(b), std::move(body))); }

Stmt block_realize(std::vector<Expr> iter_values, Expr predicate, std::shared_ptr<const BlockNode> block) {
  TEMPER_CHECK(iter_values.size() == block->iter_vars.size(), "block ", block->name, " has ", block->iter_vars.size(),
               " iter vars but ", iter_values.size(), " bindings");
  if (!predicate.defined()) predicate = make_bool(true);
  return Stmt(std::make_shared<const BlockRealizeNode>(std::move(iter_values), std::move(predicate), Stmt(std::move(block))));
}

const int64_t* as_const_int(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return &i->value;
  return nullptr;
}
bool is_const_int(const Expr& e, int64_t v) {
  const int64_t* c = as_const_int(e);
  return c && *c == v;
}
bool is_one(const Expr& e) { return is_const_int(e, 1); }
bool is_zero(const Expr& e) { return is_const_int(e, 0); }

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::ThreadBinding: return "thread_binding";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Prod: return "prod";
  }
  return "?";
}

Expr reduce_identity(ReduceOp op, DataType t) {
  switch (op) {
    case ReduceOp::Sum: return make_const(t, int64_t{0});
    case ReduceOp::Prod: return make_const(t, int64_t{1});
    case ReduceOp::Max:
      if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
      return make_const(t, t.is_int() ? -(int64_t{1} << (t.bits() - 1)) : int64_t{0});
    case ReduceOp::Min:
      if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
      return make_const(t, t.is_int() ? (int64_t{1} << (t.bits() - 1)) - 1 : (int64_t{1} << t.bits()) - 1);
  }
  return {};
}

Expr reduce_combine(ReduceOp op, Expr acc, Expr x) {
  switch (op) {
    case ReduceOp::Sum: return acc + x;
    case ReduceOp::Prod: return acc * x;
    case ReduceOp::Max: return max(acc, x);
    case ReduceOp::Min: return min(acc, x);
  }
  return {};
}

}  // namespace temper
