// Every operator's te definition computes what its reference computes.
//
// Until lowering and codegen can run a PrimFunc, this test runs it with a small
// evaluator of the unlowered IR that create_prim_func produces (loops, blocks with init,
// allocations, loads and stores), with every load and store bounds-checked. So a wrong
// index in a definition, or a Select that loads out of bounds (padding, concatenation),
// fails here. Arithmetic is done in double and rounded to float32 at each store.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "compiler/ir/printer.h"
#include "compiler/ops/workload.h"

namespace temper {
namespace {

class Evaluator {
 public:
  void bind(const Buffer& b, std::vector<double>* data) { buffers_[b.get()] = data; }

  void run(const Stmt& s) {
    if (auto* op = s.as<SeqStmtNode>()) {
      for (const Stmt& child : op->seq) run(child);
    } else if (auto* op = s.as<ForNode>()) {
      int64_t lo = integer(op->min);
      int64_t extent = integer(op->extent);
      for (int64_t v = lo; v < lo + extent; ++v) {
        vars_[op->loop_var.get()] = static_cast<double>(v);
        run(op->body);
      }
    } else if (auto* op = s.as<AllocateNode>()) {
      std::vector<double> storage(static_cast<size_t>(num_elements(op->buffer)), std::nan(""));
      bind(op->buffer, &storage);
      run(op->body);
      buffers_.erase(op->buffer.get());
    } else if (auto* op = s.as<BlockRealizeNode>()) {
      auto* block = op->block.as<BlockNode>();
      for (size_t i = 0; i < block->iter_vars.size(); ++i) {
        vars_[block->iter_vars[i].var.get()] = eval(op->iter_values[i]);
      }
      if (eval(op->predicate) == 0) return;
      // A reduction block initialises its output at the first point of its reduce domain.
      bool first = true;
      for (const IterVar& iv : block->iter_vars) {
        if (iv.kind == IterKind::Reduce && vars_[iv.var.get()] != static_cast<double>(integer(iv.dom.min))) {
          first = false;
        }
      }
      if (block->init.defined() && first) run(block->init);
      run(block->body);
    } else if (auto* op = s.as<BufferStoreNode>()) {
      double v = eval(op->value);
      if (op->buffer->dtype == DataType::float32()) v = static_cast<float>(v);
      element(op->buffer, op->indices) = v;
    } else if (auto* op = s.as<IfThenElseNode>()) {
      if (eval(op->condition) != 0) {
        run(op->then_case);
      } else if (op->else_case.defined()) {
        run(op->else_case);
      }
    } else {
      FAIL() << "the evaluator does not handle " << node_kind_name(s.kind());
    }
  }

  double eval(const Expr& e) {
    DataType t = e.dtype();
    switch (e.kind()) {
      case NodeKind::IntImm:
        return static_cast<double>(e.as<IntImmNode>()->value);
      case NodeKind::FloatImm:
        return e.as<FloatImmNode>()->value;
      case NodeKind::Var:
        return vars_.at(static_cast<const VarNode*>(e.get()));
      case NodeKind::Cast: {
        double v = eval(e.as<CastNode>()->value);
        if (t.is_bool()) return v != 0;
        if (t.is_integer()) return std::trunc(v);
        return t == DataType::float32() ? static_cast<float>(v) : v;
      }
      case NodeKind::Add:
        return binary<AddNode>(e, [](double a, double b) { return a + b; });
      case NodeKind::Sub:
        return binary<SubNode>(e, [](double a, double b) { return a - b; });
      case NodeKind::Mul:
        return binary<MulNode>(e, [](double a, double b) { return a * b; });
      case NodeKind::Div:
        return binary<DivNode>(e, [&](double a, double b) { return t.is_integer() ? std::trunc(a / b) : a / b; });
      case NodeKind::Mod:
        return binary<ModNode>(e, [](double a, double b) { return std::fmod(a, b); });
      case NodeKind::FloorDiv:
        return binary<FloorDivNode>(e, [](double a, double b) { return std::floor(a / b); });
      case NodeKind::FloorMod:
        return binary<FloorModNode>(e, [](double a, double b) { return a - std::floor(a / b) * b; });
      case NodeKind::Min:
        return binary<MinNode>(e, [](double a, double b) { return std::min(a, b); });
      case NodeKind::Max:
        return binary<MaxNode>(e, [](double a, double b) { return std::max(a, b); });
      case NodeKind::EQ:
        return binary<EQNode>(e, [](double a, double b) { return double(a == b); });
      case NodeKind::NE:
        return binary<NENode>(e, [](double a, double b) { return double(a != b); });
      case NodeKind::LT:
        return binary<LTNode>(e, [](double a, double b) { return double(a < b); });
      case NodeKind::LE:
        return binary<LENode>(e, [](double a, double b) { return double(a <= b); });
      case NodeKind::GT:
        return binary<GTNode>(e, [](double a, double b) { return double(a > b); });
      case NodeKind::GE:
        return binary<GENode>(e, [](double a, double b) { return double(a >= b); });
      case NodeKind::And:
        return binary<AndNode>(e, [](double a, double b) { return double(a != 0 && b != 0); });
      case NodeKind::Or:
        return binary<OrNode>(e, [](double a, double b) { return double(a != 0 || b != 0); });
      case NodeKind::Not:
        return eval(e.as<NotNode>()->a) == 0;
      case NodeKind::Select: {
        // Both branches, as a Select may do: a load out of bounds in either fails.
        auto* op = e.as<SelectNode>();
        double yes = eval(op->true_value);
        double no = eval(op->false_value);
        return eval(op->condition) != 0 ? yes : no;
      }
      case NodeKind::Call:
        return call(e.as<CallNode>());
      case NodeKind::BufferLoad: {
        auto* op = e.as<BufferLoadNode>();
        return element(op->buffer, op->indices);
      }
      default:
        ADD_FAILURE() << "the evaluator does not handle " << node_kind_name(e.kind()) << ": " << e;
        return 0;
    }
  }

 private:
  std::map<const BufferNode*, std::vector<double>*> buffers_;
  std::map<const VarNode*, double> vars_;

  template <typename Node, typename F>
  double binary(const Expr& e, F f) {
    auto* op = e.as<Node>();
    return f(eval(op->a), eval(op->b));
  }

  double call(const CallNode* op) {
    std::vector<double> a;
    for (const Expr& arg : op->args) a.push_back(eval(arg));
    const std::string& n = op->name;
    if (n == "exp") return std::exp(a[0]);
    if (n == "sqrt") return std::sqrt(a[0]);
    if (n == "rsqrt") return 1.0 / std::sqrt(a[0]);
    if (n == "tanh") return std::tanh(a[0]);
    if (n == "erf") return std::erf(a[0]);
    if (n == "sigmoid") return 1.0 / (1.0 + std::exp(-a[0]));
    ADD_FAILURE() << "the evaluator does not know the function " << n;
    return 0;
  }

  int64_t integer(const Expr& e) {
    const int64_t* v = as_const_int(e);
    EXPECT_NE(v, nullptr) << "not a constant: " << e;
    return v ? *v : 0;
  }

  int64_t num_elements(const Buffer& b) {
    int64_t n = 1;
    for (const Expr& extent : b->shape) n *= integer(extent);
    return n;
  }

  double& element(const Buffer& b, const std::vector<Expr>& indices) {
    static double invalid = 0;
    auto it = buffers_.find(b.get());
    if (it == buffers_.end()) {
      ADD_FAILURE() << "access to unbound buffer " << b->name;
      return invalid;
    }
    int64_t flat = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      int64_t i = static_cast<int64_t>(eval(indices[d]));
      int64_t extent = integer(b->shape[d]);
      if (i < 0 || i >= extent) {
        ADD_FAILURE() << "index " << i << " of dimension " << d << " of " << b->name << " is outside [0, " << extent
                      << ")";
        return invalid;
      }
      flat = flat * extent + i;
    }
    return (*it->second)[static_cast<size_t>(flat)];
  }
};

// A host array of float32 or int32 elements.
struct HostArray {
  DataType dtype;
  std::vector<float> f;
  std::vector<int32_t> i;

  HostArray(DataType t, size_t n) : dtype(t) {
    if (t.is_float())
      f.resize(n);
    else
      i.resize(n);
  }
  size_t size() const { return dtype.is_float() ? f.size() : i.size(); }
  void* data() { return dtype.is_float() ? static_cast<void*>(f.data()) : static_cast<void*>(i.data()); }
  double at(size_t k) const { return dtype.is_float() ? f[k] : i[k]; }
  std::vector<double> as_double() const {
    std::vector<double> v(size());
    for (size_t k = 0; k < size(); ++k) v[k] = at(k);
    return v;
  }
};

size_t num_elements(const te::Tensor& t) {
  size_t n = 1;
  for (const Expr& extent : t.shape()) n *= static_cast<size_t>(*as_const_int(extent));
  return n;
}

void check_definition(const std::string& workload) {
  SCOPED_TRACE(workload);
  ops::OpInstance inst = ops::instantiate(ops::Workload::parse(workload));
  ASSERT_EQ(inst.input_ranges.size(), inst.inputs.size());
  std::mt19937 rng(7);
  std::vector<HostArray> inputs;
  for (size_t k = 0; k < inst.inputs.size(); ++k) {
    HostArray a(inst.inputs[k].dtype(), num_elements(inst.inputs[k]));
    ops::ValueRange r = inst.input_ranges[k];
    for (size_t e = 0; e < a.size(); ++e) {
      if (a.dtype.is_float()) {
        a.f[e] = std::uniform_real_distribution<float>(r.low, r.high)(rng);
      } else {
        a.i[e] = std::uniform_int_distribution<int32_t>(r.low, r.high)(rng);
      }
    }
    inputs.push_back(std::move(a));
  }
  const te::Tensor& out = inst.outputs.at(0);
  HostArray expected(out.dtype(), num_elements(out));
  std::vector<const void*> ins;
  for (HostArray& a : inputs) ins.push_back(a.data());
  inst.reference(ins, {expected.data()});

  Evaluator evaluator;
  std::vector<std::vector<double>> storage;
  for (const HostArray& a : inputs) storage.push_back(a.as_double());
  storage.emplace_back(expected.size(), std::nan(""));
  ASSERT_EQ(inst.func.params.size(), storage.size());
  for (size_t k = 0; k < storage.size(); ++k) evaluator.bind(inst.func.params[k], &storage[k]);
  evaluator.run(inst.func.body);

  const std::vector<double>& got = storage.back();
  int mismatches = 0;
  for (size_t e = 0; e < expected.size() && mismatches < 5; ++e) {
    double want = expected.at(e);
    double tolerance = out.dtype().is_float() ? 1e-5 + 1e-4 * std::fabs(want) : 0.0;
    if (!(std::fabs(got[e] - want) <= tolerance)) {
      ADD_FAILURE() << "element " << e << ": the definition gives " << got[e] << ", the reference " << want;
      ++mismatches;
    }
  }
}

// Small workloads covering every op and each of its options.
const std::vector<std::string> kWorkloads = {
    // matrix products
    "matmul:M=3,N=5,K=7",
    "matmul:M=3,N=5,K=7,transpose_a=1",
    "matmul:M=3,N=5,K=7,transpose_b=1",
    "matmul:M=3,N=5,K=7,transpose_a=1,transpose_b=1",
    "matmul:M=4,N=3,K=6,dtype=int32",
    "batch_matmul:B=2,M=3,N=4,K=5",
    "batch_matmul:B=2,M=3,N=4,K=5,transpose_a=1,transpose_b=1",
    "batch_matmul:B=3,M=2,N=2,K=3,dtype=int32",
    "dense:M=3,N=4,K=5",
    "dense:M=3,N=4,K=5,bias=1",
    "dense:M=3,N=4,K=5,bias=1,act=relu",
    "dense:M=3,N=4,K=5,act=relu6",
    "dense:M=2,N=3,K=4,bias=1,act=sigmoid",
    "dense:M=2,N=3,K=4,act=tanh",
    "dense:M=2,N=3,K=4,bias=1,act=gelu",
    // convolution
    "conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3",
    "conv2d:N=2,C=3,H=7,W=7,K=4,R=3,S=3,pad=1",
    "conv2d:N=1,C=3,H=8,W=7,K=2,R=3,S=3,stride=2,pad=1",
    "conv2d:N=1,C=2,H=7,W=8,K=2,R=3,S=2,stride=2x1,pad=0x1x2x1",
    "conv2d:N=1,C=2,H=9,W=9,K=3,R=3,S=3,dilation=2,pad=2",
    "conv2d:N=1,C=4,H=5,W=5,K=6,R=3,S=3,groups=2,pad=1",
    "conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3,pad=1,stride=2,layout=NHWC",
    "conv2d:N=1,C=4,H=6,W=5,K=4,R=3,S=3,groups=4,pad=1x0,layout=NHWC",
    "conv2d:N=1,C=3,H=5,W=5,K=2,R=3,S=3,pad=1,dtype=int32",
    "fused_conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3,pad=1",
    "fused_conv2d:N=2,C=3,H=8,W=7,K=2,R=3,S=3,stride=2,pad=1,residual=1,act=relu",
    "depthwise_conv2d:N=1,C=3,H=6,W=6,R=3,S=3,pad=1",
    "conv2d_nchwc:N=1,C=5,H=6,W=6,K=6,R=3,S=3,pad=1,in_block=4,out_block=4",
    "conv2d_nchwc:N=1,C=3,H=7,W=7,K=4,R=3,S=3,stride=2,in_block=1,out_block=4",
    "group_conv2d_nchwc:N=1,C=8,H=6,W=6,K=8,R=3,S=3,pad=1,in_block=4,out_block=4,groups=4",
    "group_conv2d_nchwc:N=1,C=8,H=5,W=5,K=16,R=1,S=1,stride=2,in_block=4,out_block=4,groups=2",
    "depthwise_conv2d_nchwc:N=1,C=6,H=6,W=6,R=3,S=3,stride=2,pad=1,block=4",
    "depthwise_pointwise_nchwc:N=1,C=6,H=6,W=6,R=3,S=3,stride=2,pad=1,K=5,block=4,act=relu6",
    "conv2d_winograd_nchwc:N=1,C=6,H=7,W=5,K=5,pad=1,block=4,tile=4",
    "conv2d_winograd_nchwc:N=2,C=4,H=6,W=6,K=8,pad=0,block=4,tile=2",
    "depthwise_conv2d:N=1,C=3,H=7,W=7,R=3,S=3,multiplier=2,stride=2",
    "depthwise_conv2d:N=2,C=2,H=6,W=6,R=3,S=2,multiplier=2,pad=1,layout=NHWC",
    "depthwise_conv2d:N=1,C=2,H=5,W=5,R=3,S=3,dilation=2,pad=2,dtype=int32",
    // pooling
    "max_pool2d:N=1,C=2,H=7,W=7,kernel=3,stride=2,pad=1",
    "max_pool2d:N=1,C=2,H=6,W=6,kernel=2x3",
    "max_pool2d:N=1,C=3,H=7,W=6,kernel=3,pad=1,layout=NHWC",
    "max_pool2d:N=1,C=2,H=5,W=5,kernel=2,stride=2,pad=0x0x1x1,dtype=int32",
    "avg_pool2d:N=1,C=2,H=7,W=7,kernel=3,stride=2,pad=1",
    "avg_pool2d:N=1,C=2,H=7,W=7,kernel=3,stride=2,pad=1,count_include_pad=1",
    "avg_pool2d:N=1,C=2,H=6,W=7,kernel=3x2,pad=1x0x2x1,layout=NHWC",
    "avg_pool2d:N=2,C=2,H=4,W=4,kernel=2,stride=2",
    "global_avg_pool2d:N=2,C=3,H=4,W=5",
    "global_avg_pool2d:N=2,C=3,H=4,W=5,layout=NHWC",
    // elementwise
    "add:A=2x3x4,B=2x3x4",
    "add:A=2x3x4,B=3x1",
    "sub:A=3x1,B=2x1x4",
    "mul:A=4,B=2x3x4",
    "div:A=2x3,B=2x1",
    "maximum:A=2x1x3,B=1x4x1",
    "minimum:A=5,B=1",
    "add:A=2x3,B=3,dtype=int32",
    "relu:shape=3x5",
    "relu6:shape=40",
    "relu:shape=4x4,dtype=int32",
    "sigmoid:shape=2x3",
    "tanh:shape=7",
    "gelu:shape=3x3",
    "exp:shape=2x2x2",
    "sqrt:shape=9",
    "scale_bias:shape=2x3x4x4",
    "scale_bias:shape=3x5,axis=0",
    // normalisation
    "softmax:shape=3x7,axis=1",
    "softmax:shape=3x4x5,axis=1",
    "softmax:shape=6,axis=0",
    "layer_norm:shape=2x3x8,axis=2",
    "layer_norm:shape=2x3x4,axis=1,eps=0.001",
    "attention:B=2,S=3,T=5,D=4,E=2,scale=0.5,mask_rows=1",
    "attention:B=4,S=2,T=3,D=2,E=3,mask_rows=2",
    "attention:B=1,S=4,T=4,D=3,E=3",
    "attention:B=4,S=3,T=5,D=2,E=3,scale=0.5,mask_rows=2,heads=2",
    "batch_norm:shape=2x3x4x4",
    "batch_norm:shape=4x5,axis=1,eps=1e-3",
    // data movement
    "transpose:shape=2x3x4,perm=2x0x1",
    "transpose:shape=3x5,perm=1x0,dtype=int32",
    "reshape:shape=2x3x4,newshape=4x6",
    "reshape:shape=6x4,newshape=2x2x3x2,dtype=int32",
    "pad:shape=2x3,before=1x0,after=2x3,value=1.5",
    "pad:shape=3x3x3,before=0x1x2,after=1x0x2",
    "pad:shape=2x2,before=1x1,after=1x1,value=-4,dtype=int32",
    "concat:shape=2x9,axis=1,sizes=3x5x1",
    "concat:shape=5x2x2,axis=0,sizes=2x3,dtype=int32",
    "concat:shape=2x4,axis=1,sizes=4",
};

class OpDefinition : public ::testing::TestWithParam<std::string> {};

TEST_P(OpDefinition, MatchesReference) {
  check_definition(GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpDefinition, ::testing::ValuesIn(kWorkloads));

TEST(OpDefinitionList, CoversEveryOp) {
  std::set<std::string> covered;
  for (const std::string& w : kWorkloads) covered.insert(w.substr(0, w.find(':')));
  for (const std::string& op : ops::known_ops()) EXPECT_TRUE(covered.count(op)) << op << " has no definition test";
}

}  // namespace
}  // namespace temper
