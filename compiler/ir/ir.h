// Temper's loop IR, in the spirit of TVM's TensorIR.
//
// Semantics
// - Nodes are immutable and reference-counted; a pass builds new nodes and shares
//   untouched subtrees. Handles (Expr, Stmt, Var, Buffer) are cheap to copy; a null
//   handle means "absent" (an optional init, an absent else branch).
// - A Var is identified by its address, not its name: two Vars named "i" are distinct.
//   Vars are bound by For (loop variable), LetStmt/Let, and Block (iteration variables).
// - Buffers are multi-dimensional, row-major, identified by address. A PrimFunc's
//   parameters are buffers; Allocate and Block::alloc_buffers introduce the others.
//   After flatten_buffers every buffer access has exactly one index, the row-major
//   element offset; the buffers themselves (and so the PrimFunc's parameters) keep
//   their shapes, which the calling convention checks arguments against.
// - A Block is a unit of computation with named iteration variables (spatial or reduce)
//   over domains; its BlockRealize binds them to expressions of the enclosing loops.
//   A reduction block has an init statement, run before the first reduction step for
//   each spatial point. Schedule primitives work on blocks and loops; lowering turns
//   blocks into plain loops (lower_blocks).
// - Integer Div/Mod truncate toward zero (C semantics); FloorDiv/FloorMod round toward
//   negative infinity. Index arithmetic produced by schedules uses FloorDiv/FloorMod.
// - Vector types have lanes > 1. Ramp(base, stride, n) is the vector base + k*stride,
//   k = 0..n-1; Broadcast(x, n) repeats a scalar. A BufferLoad/BufferStore whose index
//   is a vector reads/writes lanes elements.
// - Reduce appears only inside te::compute bodies; te::create_prim_func removes it.
//
// The node list is written once below (TEMPER_EXPR_NODES, TEMPER_STMT_NODES) and each
// node lists its fields once (fields()): visitors, mutators, structural equality and
// hashing all follow from those two lists.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/ir/type.h"

namespace temper {

// clang-format off
#define TEMPER_BINARY_NODES(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(FloorDiv) X(FloorMod) X(Min) X(Max) \
  X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

#define TEMPER_EXPR_NODES(X) \
  X(IntImm) X(FloatImm) X(Var) X(Cast) TEMPER_BINARY_NODES(X) X(Not) X(Select) \
  X(Ramp) X(Broadcast) X(Let) X(Call) X(BufferLoad) X(Reduce)

#define TEMPER_STMT_NODES(X) \
  X(BufferStore) X(Evaluate) X(LetStmt) X(For) X(IfThenElse) X(SeqStmt) X(Allocate) \
  X(Block) X(BlockRealize)
// clang-format on

enum class NodeKind : uint8_t {
#define TEMPER_KIND(n) n,
  TEMPER_EXPR_NODES(TEMPER_KIND) TEMPER_STMT_NODES(TEMPER_KIND)
#undef TEMPER_KIND
};

const char* node_kind_name(NodeKind k);

struct Node {
  explicit Node(NodeKind k) : kind(k) {}
  virtual ~Node() = default;
  NodeKind kind;
};

struct ExprNode : Node {
  ExprNode(NodeKind k, DataType t) : Node(k), dtype(t) {}
  DataType dtype;
};

struct StmtNode : Node {
  using Node::Node;
};

// A typed, nullable, shared handle to an IR node.
template <typename Base>
class NodeRef {
 public:
  using NodeType = Base;
  NodeRef() = default;
  explicit NodeRef(std::shared_ptr<const Base> p) : ptr_(std::move(p)) {}

  const Base* get() const { return ptr_.get(); }
  const Base* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_ != nullptr; }
  NodeKind kind() const { return ptr_->kind; }
  // The node as a T, or nullptr if it is some other kind.
  template <typename T>
  const T* as() const {
    return ptr_ && ptr_->kind == T::kKind ? static_cast<const T*>(ptr_.get()) : nullptr;
  }
  // Identity, not structure: see structural_equal() for the latter.
  bool same_as(const NodeRef& o) const { return ptr_ == o.ptr_; }
  const std::shared_ptr<const Base>& shared() const { return ptr_; }

 private:
  std::shared_ptr<const Base> ptr_;
};

struct VarNode;
struct BufferNode;
struct IterVar;

class Expr : public NodeRef<ExprNode> {
 public:
  using NodeRef::NodeRef;
  Expr() = default;
  // Integer literals are int32 and float literals float32, as in TVM.
  Expr(int v);      // NOLINT(google-explicit-constructor)
  Expr(int64_t v);  // NOLINT(google-explicit-constructor)
  Expr(float v);    // NOLINT(google-explicit-constructor)
  Expr(double v);   // NOLINT(google-explicit-constructor)
  DataType dtype() const { return get()->dtype; }
};

class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = DataType::int32());
  explicit Var(std::shared_ptr<const VarNode> p);
  const VarNode* get() const;
  const VarNode* operator->() const { return get(); }
  const std::string& name() const;
};

class Stmt : public NodeRef<StmtNode> {
 public:
  using NodeRef::NodeRef;
};

// A buffer: a named, typed, row-major array in some storage scope.
struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  // "global" (function parameters and heap), "local" (registers/stack), "shared" (GPU).
  std::string scope = "global";
  // Byte alignment of the data pointer that codegen may assume.
  int alignment = 64;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope = "global");
  explicit Buffer(std::shared_ptr<const BufferNode> p) : ptr_(std::move(p)) {}
  const BufferNode* get() const { return ptr_.get(); }
  const BufferNode* operator->() const { return ptr_.get(); }
  bool defined() const { return ptr_ != nullptr; }
  bool same_as(const Buffer& o) const { return ptr_ == o.ptr_; }
  bool operator<(const Buffer& o) const { return ptr_ < o.ptr_; }
  int ndim() const { return static_cast<int>(ptr_->shape.size()); }
  // A new buffer with the same fields but another name/shape/scope (a new identity).
  Buffer with_name(const std::string& name) const;
  Buffer with_shape(std::vector<Expr> shape) const;
  Buffer with_scope(const std::string& scope) const;

 private:
  std::shared_ptr<const BufferNode> ptr_;
};

// [min, min + extent)
struct Range {
  Expr min;
  Expr extent;
};

struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
};

enum class IterKind : uint8_t { Spatial, Reduce };

struct IterVar {
  Var var;
  Range dom;
  IterKind kind = IterKind::Spatial;
  // An axis is used in expressions as its variable: A(i, k) with k a reduce axis.
  operator Expr() const { return var; }  // NOLINT(google-explicit-constructor)
};

// Annotations on loops and blocks: "pragma_auto_unroll_max_step" -> 64, "tensorize" -> name.
using AnnotationValue = std::variant<int64_t, std::string>;
using Annotations = std::map<std::string, AnnotationValue>;

// ---------------------------------------------------------------- expressions

template <NodeKind K>
struct ExprNodeBase : ExprNode {
  static constexpr NodeKind kKind = K;
  explicit ExprNodeBase(DataType t) : ExprNode(K, t) {}
};

struct IntImmNode : ExprNodeBase<NodeKind::IntImm> {
  IntImmNode(DataType t, int64_t v) : ExprNodeBase(t), value(v) {}
  int64_t value;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.value); }
};

struct FloatImmNode : ExprNodeBase<NodeKind::FloatImm> {
  FloatImmNode(DataType t, double v) : ExprNodeBase(t), value(v) {}
  double value;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.value); }
};

struct VarNode : ExprNodeBase<NodeKind::Var> {
  VarNode(DataType t, std::string n) : ExprNodeBase(t), name(std::move(n)) {}
  std::string name;
  // A Var is a leaf: its name is not part of its structure (identity is the address).
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

struct CastNode : ExprNodeBase<NodeKind::Cast> {
  CastNode(DataType t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  Expr value;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.value); }
};

// Arithmetic nodes have the type of their operands; comparisons and And/Or are bool
// (with the operands' lane count).
template <NodeKind K>
struct BinaryNode : ExprNodeBase<K> {
  BinaryNode(DataType t, Expr a_, Expr b_) : ExprNodeBase<K>(t), a(std::move(a_)), b(std::move(b_)) {}
  Expr a, b;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.a); f(s.b); }
};

#define TEMPER_BINARY_ALIAS(n) using n##Node = BinaryNode<NodeKind::n>;
TEMPER_BINARY_NODES(TEMPER_BINARY_ALIAS)
#undef TEMPER_BINARY_ALIAS

struct NotNode : ExprNodeBase<NodeKind::Not> {
  NotNode(DataType t, Expr a_) : ExprNodeBase(t), a(std::move(a_)) {}
  Expr a;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.a); }
};

// Both branches may be evaluated: Select is a value choice, not control flow.
struct SelectNode : ExprNodeBase<NodeKind::Select> {
  SelectNode(DataType t, Expr c, Expr tv, Expr fv)
      : ExprNodeBase(t), condition(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
  Expr condition, true_value, false_value;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.condition); f(s.true_value); f(s.false_value); }
};

struct RampNode : ExprNodeBase<NodeKind::Ramp> {
  RampNode(DataType t, Expr b, Expr s, int l) : ExprNodeBase(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  Expr base, stride;
  int lanes;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.base); f(s.stride); f(s.lanes); }
};

struct BroadcastNode : ExprNodeBase<NodeKind::Broadcast> {
  BroadcastNode(DataType t, Expr v, int l) : ExprNodeBase(t), value(std::move(v)), lanes(l) {}
  Expr value;
  int lanes;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.value); f(s.lanes); }
};

struct LetNode : ExprNodeBase<NodeKind::Let> {
  LetNode(DataType t, Var v, Expr val, Expr b) : ExprNodeBase(t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  Expr value, body;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.var); f(s.value); f(s.body); }
};

// Pure: a math function (exp, tanh, ...) the codegen maps to an intrinsic.
// Extern: a C function called by symbol (tensorize micro-kernels, runtime helpers).
// Intrinsic: an IR-level operation with special meaning (address_of, ...).
enum class CallKind : uint8_t { Pure, Extern, Intrinsic };

struct CallNode : ExprNodeBase<NodeKind::Call> {
  CallNode(DataType t, CallKind k, std::string n, std::vector<Expr> a)
      : ExprNodeBase(t), call_kind(k), name(std::move(n)), args(std::move(a)) {}
  CallKind call_kind;
  std::string name;
  std::vector<Expr> args;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.call_kind); f(s.name); f(s.args); }
};

struct BufferLoadNode : ExprNodeBase<NodeKind::BufferLoad> {
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> i) : ExprNodeBase(t), buffer(std::move(b)), indices(std::move(i)) {}
  Buffer buffer;
  std::vector<Expr> indices;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.buffer); f(s.indices); }
};

enum class ReduceOp : uint8_t { Sum, Max, Min, Prod };

// combiner(source) over the axes, for the points where condition holds.
struct ReduceNode : ExprNodeBase<NodeKind::Reduce> {
  ReduceNode(DataType t, ReduceOp o, Expr s, std::vector<IterVar> ax, Expr c)
      : ExprNodeBase(t), op(o), source(std::move(s)), axis(std::move(ax)), condition(std::move(c)) {}
  ReduceOp op;
  Expr source;
  std::vector<IterVar> axis;
  Expr condition;  // null: all points
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.op); f(s.axis); f(s.source); f(s.condition); }
};

// ---------------------------------------------------------------- statements

template <NodeKind K>
struct StmtNodeBase : StmtNode {
  static constexpr NodeKind kKind = K;
  StmtNodeBase() : StmtNode(K) {}
};

struct BufferStoreNode : StmtNodeBase<NodeKind::BufferStore> {
  BufferStoreNode(Buffer b, Expr v, std::vector<Expr> i) : buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.buffer); f(s.value); f(s.indices); }
};

struct EvaluateNode : StmtNodeBase<NodeKind::Evaluate> {
  explicit EvaluateNode(Expr v) : value(std::move(v)) {}
  Expr value;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.value); }
};

struct LetStmtNode : StmtNodeBase<NodeKind::LetStmt> {
  LetStmtNode(Var v, Expr val, Stmt b) : var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  Expr value;
  Stmt body;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.var); f(s.value); f(s.body); }
};

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };

struct ForNode : StmtNodeBase<NodeKind::For> {
  ForNode(Var v, Expr mn, Expr ext, ForKind k, Stmt b, std::string tag = {}, Annotations ann = {})
      : loop_var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), for_kind(k), body(std::move(b)),
        thread_tag(std::move(tag)), annotations(std::move(ann)) {}
  Var loop_var;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  std::string thread_tag;  // "blockIdx.x", "threadIdx.y", ... for ThreadBinding
  Annotations annotations;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.loop_var); f(s.min); f(s.extent); f(s.for_kind); f(s.thread_tag); f(s.annotations); f(s.body);
  }
};

struct IfThenElseNode : StmtNodeBase<NodeKind::IfThenElse> {
  IfThenElseNode(Expr c, Stmt t, Stmt e) : condition(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  Expr condition;
  Stmt then_case, else_case;  // else_case may be null
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.condition); f(s.then_case); f(s.else_case); }
};

struct SeqStmtNode : StmtNodeBase<NodeKind::SeqStmt> {
  explicit SeqStmtNode(std::vector<Stmt> s) : seq(std::move(s)) {}
  std::vector<Stmt> seq;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.seq); }
};

// Allocates buffer (in buffer->scope) for the duration of body.
struct AllocateNode : StmtNodeBase<NodeKind::Allocate> {
  AllocateNode(Buffer b, Stmt bd) : buffer(std::move(b)), body(std::move(bd)) {}
  Buffer buffer;
  Stmt body;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.buffer); f(s.body); }
};

struct BlockNode : StmtNodeBase<NodeKind::Block> {
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  Stmt init;  // null unless this is a reduction block
  Stmt body;
  std::vector<Buffer> alloc_buffers;
  Annotations annotations;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.name); f(s.iter_vars); f(s.alloc_buffers); f(s.reads); f(s.writes);
    f(s.annotations); f(s.init); f(s.body);
  }
};

// Runs `block` with its iteration variables bound to iter_values, when predicate holds.
struct BlockRealizeNode : StmtNodeBase<NodeKind::BlockRealize> {
  BlockRealizeNode(std::vector<Expr> v, Expr p, Stmt b) : iter_values(std::move(v)), predicate(std::move(p)), block(std::move(b)) {}
  std::vector<Expr> iter_values;
  Expr predicate;  // bool; IntImm 1 when always true
  Stmt block;      // a Block
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.iter_values); f(s.predicate); f(s.block); }
};

// A function over buffers: the unit that is scheduled, lowered and compiled.
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

// ---------------------------------------------------------------- construction
// The make_* functions check operand types and throw UserError with the offending
// expressions on a mismatch (a compute definition with mismatched dtypes ends here).

Expr make_const(DataType t, int64_t v);
Expr make_const(DataType t, double v);
Expr make_bool(bool v);
// A literal (IntImm/FloatImm) converted to type t.
Expr make_const_like(DataType t, const Expr& literal);
Expr cast(DataType t, Expr v);
Expr make_binary(NodeKind kind, Expr a, Expr b);
// EQ, NE, LT, LE, GT, GE.
bool is_comparison(NodeKind kind);
// The type of a binary node of this kind over operands of type t: bool (with t's lanes)
// for a comparison, t otherwise.
DataType binary_result_type(NodeKind kind, DataType t);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
Expr let(Var v, Expr value, Expr body);
Expr load(Buffer b, std::vector<Expr> indices);
Expr call_pure(DataType t, const std::string& name, std::vector<Expr> args);
Expr call_extern(DataType t, const std::string& name, std::vector<Expr> args);
Expr call_intrinsic(DataType t, const std::string& name, std::vector<Expr> args);

Stmt store(Buffer b, Expr value, std::vector<Expr> indices);
Stmt evaluate(Expr v);
Stmt let_stmt(Var v, Expr value, Stmt body);
Stmt make_for(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = {},
              Annotations ann = {});
Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = Stmt());
// Flattens nested SeqStmts; a single statement is returned as is.
Stmt seq(std::vector<Stmt> stmts);
Stmt allocate(Buffer b, Stmt body);
Stmt block_realize(std::vector<Expr> iter_values, Expr predicate, std::shared_ptr<const BlockNode> block);

// The constant value of e if it is an integer immediate.
const int64_t* as_const_int(const Expr& e);
bool is_const_int(const Expr& e, int64_t v);
bool is_one(const Expr& e);
bool is_zero(const Expr& e);

const char* for_kind_name(ForKind k);
const char* reduce_op_name(ReduceOp op);
// The identity of a reduction (0 for Sum, -inf for Max, ...).
Expr reduce_identity(ReduceOp op, DataType t);
// combiner(acc, x)
Expr reduce_combine(ReduceOp op, Expr acc, Expr x);

// ------------------------------------------------------------- node utilities

// Calls fn(static_cast<const XNode*>(node)) for the node's concrete type.
template <typename Fn>
decltype(auto) dispatch(const Node* n, Fn&& fn);

}  // namespace temper

#include "compiler/ir/ir_dispatch.h"
