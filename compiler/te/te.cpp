#include "compiler/te/te.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/analyzer.h"
#include "compiler/ir/substitute.h"

namespace temper::te {

const Buffer& Tensor::buffer() const { return op_->buffer; }
const std::vector<Expr>& Tensor::shape() const { return op_->buffer->shape; }
DataType Tensor::dtype() const { return op_->buffer->dtype; }
const std::string& Tensor::name() const { return op_->buffer->name; }

Expr Tensor::operator()(std::vector<Expr> indices) const {
  TEMPER_CHECK(defined(), "access to an undefined tensor");
  if (static_cast<int>(indices.size()) != ndim()) {
    throw UserError(str("tensor ", name(), " has ", ndim(), " dimensions but is indexed with ", indices.size(),
                        " indices"));
  }
  return load(buffer(), std::move(indices));
}

namespace {

void check_shape(const std::vector<Expr>& shape, const std::string& name) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const Expr& e = shape[d];
    if (!e.defined() || !e.dtype().is_integer() || !e.dtype().is_scalar()) {
      throw UserError(str("shape of ", name, ": dimension ", d, " is not an integer"));
    }
    if (const int64_t* c = as_const_int(e); c && *c <= 0) {
      throw UserError(str("shape of ", name, ": dimension ", d, " is ", *c, "; extents must be positive"));
    }
  }
}

// Collects the tensors (buffers) a compute body reads, in first-use order.
class InputCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::vector<Buffer> buffers;
  void visit(const BufferLoadNode* op) override {
    if (std::none_of(buffers.begin(), buffers.end(), [&](const Buffer& b) { return b.same_as(op->buffer); })) {
      buffers.push_back(op->buffer);
    }
    IRVisitor::visit(op);
  }
};

// Every tensor created so far is findable from its buffer, so compute() can link a
// body's loads back to the producing operations. Weak: tensors die with their users.
// One registry for all threads, behind a lock: a template applied on a worker thread
// (parallel featurizing) computes on tensors the main thread made.
std::vector<std::weak_ptr<const OperationNode>>& live_operations() {
  static std::vector<std::weak_ptr<const OperationNode>> ops;
  return ops;
}

std::mutex& live_operations_mutex() {
  static std::mutex m;
  return m;
}

Tensor register_op(std::shared_ptr<OperationNode> op) {
  std::lock_guard<std::mutex> lock(live_operations_mutex());
  auto& ops = live_operations();
  std::erase_if(ops, [](const auto& w) { return w.expired(); });
  std::shared_ptr<const OperationNode> c = op;
  ops.push_back(c);
  return Tensor(c);
}

Tensor tensor_of(const Buffer& b) {
  std::lock_guard<std::mutex> lock(live_operations_mutex());
  for (const auto& w : live_operations()) {
    if (auto op = w.lock(); op && op->buffer.same_as(b)) return Tensor(op);
  }
  throw UserError(str("a compute body reads buffer ", b->name,
                      " which is not a tensor made by placeholder() or compute()"));
}

// Every tensor read in a compute body must stay inside the tensor for every point of the
// axes: the IR may evaluate both sides of a select, so a guard does not make an
// out-of-range read safe (clamp the index under the guard instead, as ops::pad does).
void check_reads_in_bounds(const std::string& name, const Expr& body, const std::vector<IterVar>& axis) {
  Analyzer analyzer;
  for (const IterVar& iv : axis) analyzer.bind(iv.var, iv.dom);
  if (auto* r = body.as<ReduceNode>()) {
    for (const IterVar& iv : r->axis) analyzer.bind(iv.var, iv.dom);
  }
  post_order_visit(body, [&](const Node* n) {
    if (n->kind != NodeKind::BufferLoad) return;
    auto* load = static_cast<const BufferLoadNode*>(n);
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const int64_t* extent = as_const_int(load->buffer->shape[d]);
      Interval range = analyzer.bounds(load->indices[d]);
      if (!extent || !range.is_bounded() || (range.min >= 0 && range.max < *extent)) continue;
      throw UserError(str("compute ", name, ": index ", load->indices[d], " of ", load->buffer->name, " (dimension ",
                          d, ") takes values in [", range.min, ", ", range.max, "] but the extent is ", *extent,
                          "; keep every read inside the tensor (clamp the index, e.g. with max/min, where a select "
                          "guards it)"));
    }
  });
}

}  // namespace

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  check_shape(shape, name);
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::Placeholder;
  op->buffer = Buffer(std::move(name), dtype, std::move(shape));
  return register_op(std::move(op));
}

Tensor compute(std::vector<Expr> shape, std::function<Expr(const std::vector<Var>&)> body, std::string name,
               std::string tag) {
  check_shape(shape, name);
  static const char* kAxisNames[] = {"i", "j", "k", "l", "m", "n"};
  std::vector<Var> vars;
  std::vector<IterVar> axis;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string n = d < 6 ? kAxisNames[d] : "i" + std::to_string(d);
    Var v(n, shape[d].dtype());
    vars.push_back(v);
    axis.push_back(IterVar{v, Range{make_const(shape[d].dtype(), int64_t{0}), shape[d]}, IterKind::Spatial});
  }
  Expr value = body(vars);
  if (!value.defined()) throw UserError(str("compute ", name, ": the body returned no expression"));
  // A reduction may only be the outermost expression.
  bool nested_reduce = false;
  post_order_visit(value, [&](const Node* n) { nested_reduce |= n->kind == NodeKind::Reduce && n != value.get(); });
  if (nested_reduce) {
    throw UserError(str("compute ", name,
                        ": a reduction (sum/max/min) must be the outermost expression of the body; "
                        "compute the inner reduction as its own stage"));
  }
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::Compute;
  op->buffer = Buffer(std::move(name), value.dtype().element_of(), std::move(shape));
  if (value.dtype().is_vector()) throw UserError(str("compute ", op->buffer->name, ": the body must be a scalar"));
  op->axis = std::move(axis);
  op->tag = tag.empty() ? (value.as<ReduceNode>() ? "reduction" : "injective") : std::move(tag);
  check_reads_in_bounds(op->buffer->name, value, op->axis);
  InputCollector inputs;
  inputs.visit(value);
  for (const Buffer& b : inputs.buffers) op->inputs.push_back(tensor_of(b));
  op->body = std::move(value);
  return register_op(std::move(op));
}

Tensor compute(std::vector<Expr> shape, std::function<Expr(Var)> body, std::string name, std::string tag) {
  if (shape.size() != 1) throw UserError(str("compute ", name, ": a 1-argument body needs a 1-D shape"));
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return body(v[0]); }, std::move(name),
                 std::move(tag));
}
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var)> body, std::string name, std::string tag) {
  if (shape.size() != 2) throw UserError(str("compute ", name, ": a 2-argument body needs a 2-D shape"));
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return body(v[0], v[1]); }, std::move(name),
                 std::move(tag));
}
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var)> body, std::string name, std::string tag) {
  if (shape.size() != 3) throw UserError(str("compute ", name, ": a 3-argument body needs a 3-D shape"));
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return body(v[0], v[1], v[2]); },
                 std::move(name), std::move(tag));
}
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var, Var)> body, std::string name,
               std::string tag) {
  if (shape.size() != 4) throw UserError(str("compute ", name, ": a 4-argument body needs a 4-D shape"));
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return body(v[0], v[1], v[2], v[3]); },
                 std::move(name), std::move(tag));
}
Tensor compute(std::vector<Expr> shape, std::function<Expr(Var, Var, Var, Var, Var)> body, std::string name,
               std::string tag) {
  if (shape.size() != 5) throw UserError(str("compute ", name, ": a 5-argument body needs a 5-D shape"));
  return compute(std::move(shape), [&](const std::vector<Var>& v) { return body(v[0], v[1], v[2], v[3], v[4]); },
                 std::move(name), std::move(tag));
}

IterVar reduce_axis(Range dom, std::string name) {
  if (!dom.extent.defined() || !dom.extent.dtype().is_integer()) {
    throw UserError(str("reduce_axis ", name, ": the extent must be an integer"));
  }
  if (const int64_t* c = as_const_int(dom.extent); c && *c <= 0) {
    throw UserError(str("reduce_axis ", name, ": extent ", *c, " must be positive"));
  }
  if (dom.min.dtype() != dom.extent.dtype()) dom.min = cast(dom.extent.dtype(), dom.min);
  return IterVar{Var(std::move(name), dom.extent.dtype()), std::move(dom), IterKind::Reduce};
}

namespace {
Expr make_reduce(ReduceOp op, Expr source, std::vector<IterVar> axis, Expr where) {
  if (axis.empty()) throw UserError(str(reduce_op_name(op), "(", source, "): needs at least one reduce_axis"));
  for (const IterVar& iv : axis) {
    if (iv.kind != IterKind::Reduce) {
      throw UserError(str(reduce_op_name(op), ": axis ", iv.var->name, " was not made by reduce_axis()"));
    }
  }
  if (where.defined() && !where.dtype().is_bool()) {
    throw UserError(str(reduce_op_name(op), ": the where-condition must be bool, got ", where.dtype()));
  }
  DataType t = source.dtype();
  return Expr(std::make_shared<const ReduceNode>(t, op, std::move(source), std::move(axis), std::move(where)));
}

Expr math1(const char* name, Expr x) {
  if (!x.dtype().is_float()) {
    throw UserError(str(name, "(", x, "): needs a floating-point argument, got ", x.dtype(), "; cast it first"));
  }
  DataType t = x.dtype();
  return call_pure(t, name, {std::move(x)});
}
}  // namespace

Expr sum(Expr source, std::vector<IterVar> axis, Expr where) {
  return make_reduce(ReduceOp::Sum, std::move(source), std::move(axis), std::move(where));
}
Expr max(Expr source, std::vector<IterVar> axis, Expr where) {
  return make_reduce(ReduceOp::Max, std::move(source), std::move(axis), std::move(where));
}
Expr min(Expr source, std::vector<IterVar> axis, Expr where) {
  return make_reduce(ReduceOp::Min, std::move(source), std::move(axis), std::move(where));
}
Expr prod(Expr source, std::vector<IterVar> axis, Expr where) {
  return make_reduce(ReduceOp::Prod, std::move(source), std::move(axis), std::move(where));
}

Expr exp(Expr x) { return math1("exp", std::move(x)); }
Expr log(Expr x) { return math1("log", std::move(x)); }
Expr sqrt(Expr x) { return math1("sqrt", std::move(x)); }
Expr rsqrt(Expr x) { return math1("rsqrt", std::move(x)); }
Expr tanh(Expr x) { return math1("tanh", std::move(x)); }
Expr erf(Expr x) { return math1("erf", std::move(x)); }
Expr sigmoid(Expr x) { return math1("sigmoid", std::move(x)); }
Expr fabs(Expr x) { return math1("fabs", std::move(x)); }
Expr floor(Expr x) { return math1("floor", std::move(x)); }
Expr ceil(Expr x) { return math1("ceil", std::move(x)); }
Expr sin(Expr x) { return math1("sin", std::move(x)); }
Expr cos(Expr x) { return math1("cos", std::move(x)); }
Expr tan(Expr x) { return math1("tan", std::move(x)); }
Expr asin(Expr x) { return math1("asin", std::move(x)); }
Expr acos(Expr x) { return math1("acos", std::move(x)); }
Expr atan(Expr x) { return math1("atan", std::move(x)); }
Expr pow(Expr x, Expr y) {
  if (!x.dtype().is_float()) throw UserError(str("pow(", x, ", ", y, "): needs floating-point arguments"));
  if (y.dtype() != x.dtype()) y = cast(x.dtype(), y);
  DataType t = x.dtype();
  return call_pure(t, "pow", {std::move(x), std::move(y)});
}

namespace {

// The read regions of a block: one point region per buffer read (its first access).
std::vector<BufferRegion> access_regions(const Expr& value) {
  std::vector<BufferRegion> regions;
  post_order_visit(value, [&](const Node* n) {
    if (n->kind != NodeKind::BufferLoad) return;
    auto* load = static_cast<const BufferLoadNode*>(n);
    for (const BufferRegion& r : regions) {
      if (r.buffer.same_as(load->buffer)) return;
    }
    BufferRegion r{load->buffer, {}};
    for (const Expr& i : load->indices) r.region.push_back(Range{i, make_const(i.dtype(), int64_t{1})});
    regions.push_back(std::move(r));
  });
  return regions;
}

Stmt stage_to_loops(const OperationNode& op) {
  const Buffer& out = op.buffer;
  auto* reduce = op.body.as<ReduceNode>();
  std::vector<IterVar> block_vars;
  std::vector<Var> loop_vars;
  VarMap to_block_vars;  // the compute's own axis variables to the block's iteration variables
  std::vector<Expr> out_index;
  auto add_axis = [&](const IterVar& iv) {
    Var bv("v" + iv.var->name, iv.var.dtype());
    block_vars.push_back(IterVar{bv, iv.dom, iv.kind});
    loop_vars.push_back(Var(iv.var->name, iv.var.dtype()));
    to_block_vars.emplace(iv.var.get(), bv);
    if (iv.kind == IterKind::Spatial) out_index.push_back(bv);
  };
  for (const IterVar& iv : op.axis) add_axis(iv);
  if (reduce) {
    for (const IterVar& iv : reduce->axis) add_axis(iv);
  }
  auto block = std::make_shared<BlockNode>();
  block->name = out->name;
  block->iter_vars = block_vars;
  if (reduce) {
    Expr source = substitute(reduce->source, to_block_vars);
    Expr acc = load(out, out_index);
    Expr update = reduce_combine(reduce->op, acc, source);
    if (reduce->condition.defined()) update = select(substitute(reduce->condition, to_block_vars), update, acc);
    block->init = store(out, reduce_identity(reduce->op, out->dtype), out_index);
    block->body = store(out, update, out_index);
  } else {
    block->body = store(out, substitute(op.body, to_block_vars), out_index);
  }
  auto* body_store = block->body.as<BufferStoreNode>();
  block->reads = access_regions(body_store->value);
  block->writes = {BufferRegion{out, {}}};
  for (const Expr& i : out_index) block->writes[0].region.push_back(Range{i, make_const(i.dtype(), int64_t{1})});

  std::vector<Expr> bindings(loop_vars.begin(), loop_vars.end());
  Stmt body = block_realize(bindings, make_bool(true), block);
  for (size_t d = block_vars.size(); d-- > 0;) {
    body = make_for(loop_vars[d], block_vars[d].dom.min, block_vars[d].dom.extent, ForKind::Serial, body);
  }
  return body;
}

}  // namespace

PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name) {
  // Stages in dependency order: a post-order walk from the outputs.
  std::vector<const OperationNode*> order;
  std::set<const OperationNode*> visited;
  std::function<void(const OperationNode*)> walk = [&](const OperationNode* op) {
    if (!visited.insert(op).second) return;
    for (const Tensor& in : op->inputs) walk(in.op());
    order.push_back(op);
  };
  for (const Tensor& t : args) {
    if (!t.defined()) throw UserError(str("create_prim_func ", name, ": an argument tensor is undefined"));
    walk(t.op());
  }
  auto is_arg = [&](const OperationNode* op) {
    return std::any_of(args.begin(), args.end(), [&](const Tensor& t) { return t.op() == op; });
  };
  std::vector<Stmt> stages;
  std::vector<Buffer> intermediates;
  for (const OperationNode* op : order) {
    if (op->kind == OperationNode::Kind::Placeholder) {
      if (!is_arg(op)) {
        throw UserError(str("create_prim_func ", name, ": the computation reads placeholder ", op->buffer->name,
                            " which is not among the arguments; add it to the argument list"));
      }
      continue;
    }
    stages.push_back(stage_to_loops(*op));
    if (!is_arg(op)) intermediates.push_back(op->buffer);
  }
  if (stages.empty()) throw UserError(str("create_prim_func ", name, ": nothing is computed"));
  Stmt body = seq(stages);
  for (size_t i = intermediates.size(); i-- > 0;) body = allocate(intermediates[i], body);
  PrimFunc f;
  f.name = name;
  for (const Tensor& t : args) f.params.push_back(t.buffer());
  f.body = body;
  return f;
}

}  // namespace temper::te
