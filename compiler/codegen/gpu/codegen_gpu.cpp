#include "compiler/codegen/gpu/codegen_gpu.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "compiler/codegen/c/lowered_func_analysis.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"

namespace temper {
namespace {

// Alignment proofs only need the power-of-two part of a factor, up to this.
constexpr int64_t kMaxFactor = 1024;

// A power of two that divides every value of integer expression e (kMaxFactor at most).
int64_t known_factor(const Expr& e, const std::map<const VarNode*, int64_t>& let_factors) {
  auto factor = [&](const Expr& x) { return known_factor(x, let_factors); };
  if (const auto* imm = e.as<IntImmNode>()) return imm->value == 0 ? kMaxFactor : std::gcd(imm->value, kMaxFactor);
  if (const auto* v = e.as<VarNode>()) {
    auto it = let_factors.find(v);
    return it == let_factors.end() ? 1 : it->second;
  }
  if (const auto* c = e.as<CastNode>()) return c->value.dtype().is_integer() ? factor(c->value) : 1;
  if (const auto* op = e.as<AddNode>()) return std::gcd(factor(op->a), factor(op->b));
  if (const auto* op = e.as<SubNode>()) return std::gcd(factor(op->a), factor(op->b));
  if (const auto* op = e.as<MinNode>()) return std::gcd(factor(op->a), factor(op->b));
  if (const auto* op = e.as<MaxNode>()) return std::gcd(factor(op->a), factor(op->b));
  if (const auto* op = e.as<SelectNode>()) return std::gcd(factor(op->true_value), factor(op->false_value));
  if (const auto* op = e.as<MulNode>()) return std::gcd(factor(op->a) * factor(op->b), kMaxFactor);
  return 1;
}

// Records the known factors of integer let variables, outer lets before the inner ones
// that use them.
class LetFactorCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  std::map<const VarNode*, int64_t> factors;

 protected:
  void visit(const LetStmtNode* op) override {
    if (op->var.dtype().is_integer() && op->var.dtype().is_scalar()) {
      factors[op->var.get()] = known_factor(op->value, factors);
    }
    IRVisitor::visit(op);
  }
};

// The shared buffers a kernel allocates, in the order of their Allocates, once each.
std::vector<Buffer> shared_allocations(const Stmt& body) {
  std::vector<Buffer> buffers;
  std::set<const BufferNode*> seen;
  std::vector<const AllocateNode*> allocates;
  post_order_visit(body, [&](const Node* n) {
    if (n->kind == NodeKind::Allocate) allocates.push_back(static_cast<const AllocateNode*>(n));
  });
  // Post-order lists an inner Allocate before the one around it.
  std::reverse(allocates.begin(), allocates.end());
  for (const AllocateNode* op : allocates) {
    if (op->buffer->scope == "shared" && seen.insert(op->buffer.get()).second) buffers.push_back(op->buffer);
  }
  return buffers;
}

bool stores_to(const Stmt& body, const Buffer& b) {
  bool found = false;
  post_order_visit(body, [&](const Node* n) {
    if (n->kind == NodeKind::BufferStore) found |= static_cast<const BufferStoreNode*>(n)->buffer.same_as(b);
  });
  return found;
}

bool contains_let(const Expr& e) {
  bool found = false;
  post_order_visit(e, [&](const Node* n) { found |= n->kind == NodeKind::Let; });
  return found;
}

const std::set<std::string>& thread_tags() {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                              "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  return kTags;
}

}  // namespace

std::string CodeGenGPU::emit_kernels(const std::vector<DeviceFunction>& fns) {
  std::vector<const DeviceKernel*> kernels;
  std::vector<PrimFunc> views;
  for (const DeviceFunction& fn : fns) {
    for (const DeviceKernel& k : fn.kernels) {
      kernels.push_back(&k);
      views.push_back(PrimFunc{k.name, k.params, k.body});
    }
  }
  check_lowered(views, {kThreadBarrier});
  for (const DeviceKernel* k : kernels) check_kernel(*k);
  for (const DeviceKernel* k : kernels) global_names_.insert(k->name);
  for (const std::string& word : reserved_words()) global_names_.insert(word);
  for (const DeviceKernel* k : kernels) print_kernel(*k);
  return assemble();
}

void CodeGenGPU::check_kernel(const DeviceKernel& kernel) const {
  std::string where = str(dialect_name(), " kernel ", kernel.name);
  ShapeBinding binding = bind_shape_vars(PrimFunc{kernel.name, kernel.params, kernel.body});
  if (!binding.shape_vars.empty()) {
    throw UserError(str(where, " has the symbolic extent ", binding.shape_vars[0].name(),
                        ": a GPU kernel is compiled for one shape; give the function constant shapes"));
  }
  auto check_type = [&](DataType t, const std::string& what) {
    if (t.is_float() && t.bits() == 16) {
      throw UnsupportedError(str(where, ": ", what, " is float16, which the ", dialect_name(),
                                 " backend does not support yet; compute in float32 or use the llvm or c target"));
    }
  };
  for (const Buffer& b : kernel.params) check_type(b->dtype, "buffer " + b->name);
  post_order_visit(kernel.body, [&](const Node* n) {
    if (const auto* e = dynamic_cast<const ExprNode*>(n)) check_type(e->dtype.element_of(), "an expression");
    if (n->kind == NodeKind::Call) {
      const auto* op = static_cast<const CallNode*>(n);
      if (op->call_kind == CallKind::Extern) {
        throw UserError(str(where, " calls the extern function ", op->name,
                            ": a GPU kernel cannot call host code; do not tensorize for a GPU target"));
      }
      if (op->call_kind == CallKind::Intrinsic && op->name != kThreadBarrier) {
        throw UserError(str(where, " uses the intrinsic ", op->name, ", which GPU kernels do not support"));
      }
    } else if (n->kind == NodeKind::For) {
      const auto* op = static_cast<const ForNode*>(n);
      if (op->for_kind == ForKind::Parallel) {
        throw UserError(str(where, ": loop ", op->loop_var.name(),
                            " is parallel; a kernel runs in parallel through its thread bindings, so bind the loop to "
                            "blockIdx or threadIdx instead"));
      }
      if (op->for_kind == ForKind::ThreadBinding && !thread_tags().count(op->thread_tag)) {
        throw UserError(str(where, ": loop ", op->loop_var.name(), " is bound to '", op->thread_tag,
                            "'; kernels bind loops to blockIdx.x/y/z and threadIdx.x/y/z"));
      }
      if (op->for_kind == ForKind::ThreadBinding && !as_const_int(op->extent)) {
        throw UserError(str(where, ": loop ", op->loop_var.name(), " bound to ", op->thread_tag, " has the extent ",
                            op->extent, ", which is not a constant"));
      }
    } else if (n->kind == NodeKind::Allocate) {
      const Buffer& b = static_cast<const AllocateNode*>(n)->buffer;
      check_type(b->dtype, "buffer " + b->name);
      if (b->scope != "shared" && b->scope != "local") {
        throw UserError(
            str(where, " allocates buffer ", b->name, " in '", b->scope,
                "' memory; a kernel allocates only \"shared\" and \"local\" buffers (global temporaries are "
                "allocated by the host)"));
      }
      if (!as_const_int(buffer_elements(b))) {
        throw UserError(str(where, " allocates ", b->scope, " buffer ", b->name, " of ", buffer_elements(b),
                            " elements, which is not a constant"));
      }
    }
  });
}

void CodeGenGPU::print_kernel(const DeviceKernel& kernel) {
  start_function(kernel.name);
  used_local_names_ = global_names_;
  kernel_ = &kernel;
  LetFactorCollector lets;
  lets.visit(kernel.body);
  let_factors_ = std::move(lets.factors);

  FunctionText text;
  fn_ = &text;
  std::vector<std::string> params;
  for (const Buffer& b : kernel.params) {
    params.push_back(kernel_param(storage_type(b->dtype), name_of(b), !stores_to(kernel.body, b)));
  }
  for (const Buffer& b : shared_allocations(kernel.body)) {
    int64_t elements = *as_const_int(buffer_elements(b));
    line(str(shared_qualifier(), " ", storage_type(b->dtype), " ", name_of(b), "[", std::max<int64_t>(elements, 1),
             "] __attribute__((aligned(", b->alignment, ")));"));
  }
  print_stmt(kernel.body);
  fn_ = nullptr;
  kernel_ = nullptr;
  definitions_.push_back(kernel_signature(kernel, params) + " {\n" + text.body.str() + "}\n");
}

int64_t CodeGenGPU::launch_extent(const std::string& thread_tag) const {
  int axis = thread_tag.back() - 'x';
  return thread_tag.rfind("blockIdx", 0) == 0 ? kernel_->grid[axis] : kernel_->block[axis];
}

// ------------------------------------------------------------------ statements

void CodeGenGPU::print_thread_binding_loop(const ForNode* op) {
  int64_t extent = *as_const_int(op->extent);
  int64_t launched = launch_extent(op->thread_tag);
  TEMPER_CHECK(extent <= launched, "loop ", op->loop_var.name(), " of extent ", extent, " is bound to ", op->thread_tag,
               ", launched with ", launched, " in ", func_name_);
  std::string type = scalar_type(op->loop_var.dtype());
  std::string begin = is_zero(op->min) ? "" : print_expr(op->min) + " + ";
  std::string end = is_zero(op->min) ? print_expr(op->extent) : print_expr(op->min + op->extent);
  ScopedName name(*this, op->loop_var);
  line(str(type, " ", name.name(), " = ", begin, thread_index(op->thread_tag), ";"));
  // Threads past the loop's extent skip its body; none do when the extents agree.
  bool guarded = extent < launched;
  if (guarded) {
    line(str("if (", name.name(), " < ", end, ") {"));
    ++fn_->indent;
  }
  print_stmt(op->body);
  if (guarded) {
    --fn_->indent;
    line("}");
  }
}

void CodeGenGPU::print_unrolled_loop(const ForNode* op) {
  line("#pragma unroll");
  print_serial_loop(op);
}

void CodeGenGPU::print_lane_loop(int lanes, const std::string& statement) {
  line("#pragma unroll");
  CodeGenC::print_lane_loop(lanes, statement);
}

void CodeGenGPU::print_allocate(const AllocateNode* op) {
  const Buffer& b = op->buffer;
  // Shared arrays are declared at the top of the kernel.
  if (b->scope == "shared") return print_stmt(op->body);
  ScopedName scoped(*this, b);
  int64_t elements = *as_const_int(buffer_elements(b));
  line(str(storage_type(b->dtype), " ", scoped.name(), "[", std::max<int64_t>(elements, 1), "] __attribute__((aligned(",
           b->alignment, ")));"));
  print_stmt(op->body);
}

std::string CodeGenGPU::element_address(const Buffer& b, const Expr& index) {
  auto it = local_names_.find(b.get());
  TEMPER_CHECK(it != local_names_.end(), "buffer ", b->name, " is neither a parameter nor allocated in ", func_name_);
  return "(" + it->second + " + " + print_expr(index) + ")";
}

bool CodeGenGPU::allows_vector_access(const Buffer& b, const Expr& first, int lanes) const {
  if (vector_type(b->dtype, lanes).empty()) return false;
  if (!vector_access_needs_alignment()) return true;
  int64_t bytes = int64_t{b->dtype.bytes()} * lanes;
  return b->alignment % bytes == 0 && known_factor(first, let_factors_) % lanes == 0;
}

void CodeGenGPU::print_vector_store(const BufferStoreNode* op) {
  int lanes = op->value.dtype().lanes();
  const Buffer& b = op->buffer;
  Expr index = flat_index(op->indices);

  // The value's loads of contiguous lanes, read as vectors before the store. A let in the
  // value could bind a variable of their indices, so then none is.
  std::vector<const BufferLoadNode*> vector_reads;
  if (!contains_let(op->value)) {
    post_order_visit(op->value, [&](const Node* n) {
      if (n->kind != NodeKind::BufferLoad) return;
      const auto* load = static_cast<const BufferLoadNode*>(n);
      const RampNode* ramp = flat_index(load->indices).as<RampNode>();
      if (ramp && is_one(ramp->stride) && allows_vector_access(load->buffer, ramp->base, lanes) &&
          !vector_loads_.count(load)) {
        std::string type = vector_type(load->buffer->dtype, lanes);
        std::string name = fresh_local(load->buffer->name + "_vec");
        line(str(type, " ", name, " = ", vector_load(type, element_address(load->buffer, ramp->base), lanes), ";"));
        vector_loads_[load] = name;
        vector_reads.push_back(load);
      }
    });
  }

  std::vector<std::string> values;
  for (int k = 0; k < lanes; ++k) {
    AtLane at(*this, k);
    values.push_back(print_expr(op->value));
  }
  const RampNode* ramp = index.as<RampNode>();
  if (ramp && is_one(ramp->stride) && allows_vector_access(b, ramp->base, lanes)) {
    std::string type = vector_type(b->dtype, lanes);
    line(vector_store(type, element_address(b, ramp->base), lanes, vector_value(type, values)) + ";");
  } else {
    // Lane by lane. Vector semantics read every lane before writing any: when the value
    // or the index still reads the buffer, the lanes are computed first.
    bool reads_target = false;
    auto find_reads = [&](const Node* n) {
      if (n->kind != NodeKind::BufferLoad) return;
      const auto* load = static_cast<const BufferLoadNode*>(n);
      reads_target |= load->buffer.same_as(b) && !vector_loads_.count(load);
    };
    post_order_visit(op->value, find_reads);
    post_order_visit(index, find_reads);
    std::string cast_to_storage = b->dtype.is_bool() ? "(uint8_t)" : "";
    if (reads_target) {
      std::string staged = fresh_local(name_of(b) + "_lanes");
      line(str(scalar_type(b->dtype), " ", staged, "[", lanes, "];"));
      for (int k = 0; k < lanes; ++k) line(str(staged, "[", k, "] = ", values[k], ";"));
      for (int k = 0; k < lanes; ++k) values[k] = str(staged, "[", k, "]");
    }
    for (int k = 0; k < lanes; ++k) {
      AtLane at(*this, k);
      line(str(element_ref(b, index), " = ", cast_to_storage, values[k], ";"));
    }
  }
  for (const BufferLoadNode* load : vector_reads) vector_loads_.erase(load);
}

// ------------------------------------------------------------------ expressions

std::string CodeGenGPU::print_intrinsic(const CallNode* op) {
  TEMPER_CHECK(op->name == kThreadBarrier, "intrinsic ", op->name, " reached the ", dialect_name(), " printer");
  return barrier();
}

std::string CodeGenGPU::print_buffer_load(const BufferLoadNode* op) {
  auto it = vector_loads_.find(op);
  if (it == vector_loads_.end() || lane_index_ < 0) return CodeGenC::print_buffer_load(op);
  return it->second + vector_lane(lane_index_);
}

CodeGenGPU::AtLane::AtLane(CodeGenGPU& printer, int lane)
    : printer_(printer), outer_lane_(printer.lane_), outer_lane_index_(printer.lane_index_) {
  printer.lane_ = std::to_string(lane);
  printer.lane_index_ = lane;
}

CodeGenGPU::AtLane::~AtLane() {
  printer_.lane_ = outer_lane_;
  printer_.lane_index_ = outer_lane_index_;
}

}  // namespace temper
