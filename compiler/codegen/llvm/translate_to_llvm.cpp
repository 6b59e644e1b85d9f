// Temper's lowered IR to LLVM IR, through IRBuilder (see codegen_llvm.h for the shape of
// the generated code).
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <numeric>
#include <optional>
#include <unordered_map>

#include "compiler/codegen/c/lowered_func_analysis.h"
#include "compiler/codegen/llvm/llvm_backend.h"
#include "compiler/codegen/llvm/vector_math.h"
#include "compiler/ir/functor.h"
#include "compiler/runtime/module.h"

namespace temper {
namespace {

// TemperTensor's fields, as c_runtime_api.h lays them out.
enum TensorField { kData = 0, kShape = 2 };

constexpr int64_t kUnknownMultipleCap = int64_t{1} << 20;

int64_t largest_power_of_two_dividing(int64_t n) {
  return n == 0 ? kUnknownMultipleCap : (n & -n);
}

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::LLVMContext& context, llvm::TargetMachine& tm) : context_(context), tm_(tm), builder_(context) {
    llvm::FastMathFlags contract;
    contract.setAllowContract(true);
    builder_.setFastMathFlags(contract);
  }

  std::unique_ptr<llvm::Module> translate(const std::vector<PrimFunc>& funcs) {
    check_lowered(funcs);
    module_ = std::make_unique<llvm::Module>(funcs.empty() ? "temper" : funcs[0].name, context_);
    module_->setTargetTriple(tm_.getTargetTriple().str());
    module_->setDataLayout(tm_.createDataLayout());
    tensor_type_ = llvm::StructType::create(context_,
                                            {ptr_type(), i32(), ptr_type(), ptr_type(), builder_.getInt8Ty(),
                                             builder_.getInt8Ty(), builder_.getInt16Ty(), i32(), i32()},
                                            "TemperTensor");
    for (const PrimFunc& f : funcs) translate_function(f);
    std::string problems;
    llvm::raw_string_ostream os(problems);
    TEMPER_CHECK(!llvm::verifyModule(*module_, &os), "invalid LLVM IR generated: ", os.str());
    return std::move(module_);
  }

 private:
  struct BufferValue {
    llvm::Value* ptr;
    int64_t alignment;  // bytes the pointer is known to be aligned to
  };
  // The LLVM function being emitted and the values it knows.
  struct FunctionState {
    explicit FunctionState(llvm::Function* function = nullptr) : fn(function) {}
    llvm::Function* fn;
    std::unordered_map<const VarNode*, llvm::Value*> vars;
    std::unordered_map<const BufferNode*, BufferValue> buffers;
    // Of the Vars bound in this function, a number their value is a multiple of.
    std::unordered_map<const VarNode*, int64_t> multiples;
    std::vector<llvm::Value*> heap_buffers;  // live temper_alloc results, innermost last
  };

  // Binds a Var for the scope of its binding (LetStmt, Let, loop); an outer binding of the
  // same Var, which the IR allows in copies of a statement, is back afterwards.
  class ScopedVar {
   public:
    ScopedVar(FunctionState& fs, const Var& var, llvm::Value* value, int64_t multiple) : fs_(fs), var_(var.get()) {
      if (auto it = fs.vars.find(var_); it != fs.vars.end()) hidden_ = {it->second, fs.multiples[var_]};
      if (auto* inst = llvm::dyn_cast<llvm::Instruction>(value); inst && !inst->hasName()) inst->setName(var.name());
      fs.vars[var_] = value;
      fs.multiples[var_] = multiple;
    }
    ~ScopedVar() {
      if (hidden_) {
        fs_.vars[var_] = hidden_->first;
        fs_.multiples[var_] = hidden_->second;
      } else {
        fs_.vars.erase(var_);
        fs_.multiples.erase(var_);
      }
    }
    ScopedVar(const ScopedVar&) = delete;
    ScopedVar& operator=(const ScopedVar&) = delete;

   private:
    FunctionState& fs_;
    const VarNode* var_;
    std::optional<std::pair<llvm::Value*, int64_t>> hidden_;
  };

  // ---------------------------------------------------------------- types

  llvm::Type* i32() { return builder_.getInt32Ty(); }
  llvm::Type* i64() { return builder_.getInt64Ty(); }
  llvm::PointerType* ptr_type() { return builder_.getPtrTy(); }

  llvm::Type* scalar_type(DataType t) {
    if (t.is_handle()) return ptr_type();
    if (t.is_bool()) return builder_.getInt1Ty();
    if (t.is_float()) {
      switch (t.bits()) {
        case 16:
          return builder_.getHalfTy();
        case 32:
          return builder_.getFloatTy();
        case 64:
          return builder_.getDoubleTy();
      }
      throw UserError(str("the LLVM backend has no type for ", t));
    }
    return builder_.getIntNTy(t.bits());
  }
  // The type of values in registers: bool is i1, vectors are <lanes x T>.
  llvm::Type* value_type(DataType t) {
    llvm::Type* element = scalar_type(t.element_of());
    return t.is_vector() ? llvm::FixedVectorType::get(element, t.lanes()) : element;
  }
  // The type of buffer elements in memory: bool takes a byte.
  llvm::Type* storage_type(DataType t) { return t.is_bool() ? builder_.getInt8Ty() : scalar_type(t); }

  // ---------------------------------------------------------------- functions

  llvm::Function* create_function(const std::string& name, llvm::FunctionType* type,
                                  llvm::GlobalValue::LinkageTypes linkage) {
    llvm::Function* fn = llvm::Function::Create(type, linkage, name, module_.get());
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr("target-cpu", tm_.getTargetCPU());
    if (!tm_.getTargetFeatureString().empty()) fn->addFnAttr("target-features", tm_.getTargetFeatureString());
    return fn;
  }

  // Marks pointer parameter i of fn as a buffer: no other pointer reaches its memory
  // during the call, and it is aligned.
  void mark_buffer_param(llvm::Function* fn, unsigned i, int64_t alignment) {
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
    fn->addParamAttr(i, llvm::Attribute::getWithAlignment(context_, llvm::Align(alignment)));
  }

  void translate_function(const PrimFunc& f) {
    func_name_ = f.name;
    parallel_count_ = 0;
    ShapeBinding binding = bind_shape_vars(f);

    // The compute function: buffers' data pointers, then the shape variables.
    std::vector<llvm::Type*> param_types(f.params.size(), ptr_type());
    for (const Var& v : binding.shape_vars) param_types.push_back(value_type(v.dtype()));
    llvm::Function* compute = create_function(f.name + ".compute", llvm::FunctionType::get(i32(), param_types, false),
                                              llvm::GlobalValue::InternalLinkage);
    fs_ = FunctionState(compute);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", compute));
    for (size_t p = 0; p < f.params.size(); ++p) {
      const Buffer& b = f.params[p];
      mark_buffer_param(compute, p, b->alignment);
      compute->getArg(p)->setName(b->name);
      fs_.buffers[b.get()] = {compute->getArg(p), b->alignment};
    }
    for (size_t i = 0; i < binding.shape_vars.size(); ++i) {
      llvm::Argument* arg = compute->getArg(f.params.size() + i);
      arg->setName(binding.shape_vars[i].name());
      fs_.vars[binding.shape_vars[i].get()] = arg;
    }
    emit_stmt(f.body);
    builder_.CreateRet(builder_.getInt32(0));

    translate_wrapper(f, binding, compute);
  }

  // int32_t f(const TemperTensor* args, int32_t num_args): checks, binds, calls compute.
  void translate_wrapper(const PrimFunc& f, const ShapeBinding& binding, llvm::Function* compute) {
    llvm::Function* wrapper = create_function(function_symbol(f.name), llvm::FunctionType::get(i32(), {ptr_type(), i32()}, false),
                                              llvm::GlobalValue::ExternalLinkage);
    fs_ = FunctionState(wrapper);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", wrapper));
    llvm::Value* args = wrapper->getArg(0);
    args->setName("args");
    wrapper->getArg(1)->setName("num_args");
    llvm::Value* func_name = string_constant(f.name);
    auto field = [&](size_t p, TensorField which) {
      llvm::Value* tensor = builder_.CreateConstInBoundsGEP1_64(tensor_type_, args, p);
      return builder_.CreateStructGEP(tensor_type_, tensor, which);
    };

    return_if_failed(call_runtime("temper_check_num_args", i32(), {ptr_type(), i32(), i32()},
                                  {func_name, wrapper->getArg(1), builder_.getInt32(f.params.size())}));
    // Every argument's header first, binding the shape variables; then the shapes, which
    // may use variables a later argument binds.
    std::vector<llvm::Value*> shapes;
    for (size_t p = 0; p < f.params.size(); ++p) {
      const Buffer& b = f.params[p];
      DataType t = b->dtype;
      return_if_failed(call_runtime(
          "temper_check_tensor_header", i32(),
          {ptr_type(), ptr_type(), i32(), ptr_type(), i32(), builder_.getInt8Ty(), builder_.getInt8Ty(), i32()},
          {func_name, args, builder_.getInt32(p), string_constant(b->name), builder_.getInt32(b.ndim()),
           builder_.getInt8(static_cast<uint8_t>(t.code())), builder_.getInt8(t.bits()),
           builder_.getInt32(b->alignment)}));
      llvm::Value* shape = builder_.CreateLoad(ptr_type(), field(p, kShape), b->name + ".shape");
      shapes.push_back(shape);
      for (int d = 0; d < b.ndim(); ++d) {
        if (!binding.binds_var[p][d]) continue;
        const VarNode* v = b->shape[d].as<VarNode>();
        llvm::Value* extent = builder_.CreateLoad(i64(), builder_.CreateConstInBoundsGEP1_64(i64(), shape, d));
        fs_.vars[v] = builder_.CreateIntCast(extent, value_type(v->dtype), true, v->name);
      }
    }
    llvm::Value* expected = nullptr;
    for (size_t p = 0; p < f.params.size(); ++p) {
      const Buffer& b = f.params[p];
      if (b.ndim() == 0) continue;
      if (!expected) expected = entry_alloca(llvm::ArrayType::get(i64(), max_ndim(f)), 8, "expected_shape");
      for (int d = 0; d < b.ndim(); ++d) {
        llvm::Value* extent = builder_.CreateIntCast(emit_expr(b->shape[d]), i64(), true);
        builder_.CreateStore(extent, builder_.CreateConstInBoundsGEP1_64(i64(), expected, d));
      }
      return_if_failed(call_runtime("temper_check_tensor_shape", i32(),
                                    {ptr_type(), ptr_type(), i32(), ptr_type(), ptr_type()},
                                    {func_name, args, builder_.getInt32(p), string_constant(b->name), expected}));
    }
    std::vector<llvm::Value*> call_args;
    for (size_t p = 0; p < f.params.size(); ++p) {
      call_args.push_back(builder_.CreateLoad(ptr_type(), field(p, kData), f.params[p]->name + ".data"));
    }
    for (const Var& v : binding.shape_vars) call_args.push_back(fs_.vars.at(v.get()));
    builder_.CreateRet(builder_.CreateCall(compute, call_args));
  }

  static int max_ndim(const PrimFunc& f) {
    int n = 0;
    for (const Buffer& b : f.params) n = std::max(n, b.ndim());
    return n;
  }

  llvm::Value* string_constant(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    return strings_[s] = builder_.CreateGlobalString(s, ".str", 0, module_.get());
  }

  llvm::Value* call_runtime(const std::string& name, llvm::Type* result, const std::vector<llvm::Type*>& params,
                            const std::vector<llvm::Value*>& args) {
    llvm::FunctionCallee fn = module_->getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
    return builder_.CreateCall(fn, args);
  }

  // Continues when status is 0; otherwise frees this function's live heap buffers and
  // returns -1 (the callee has set the error message).
  void return_if_failed(llvm::Value* status) {
    branch_to_failure_if(builder_.CreateICmpNE(status, builder_.getInt32(0)));
  }

  void branch_to_failure_if(llvm::Value* failed) {
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(context_, "fail", fs_.fn);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(context_, "ok", fs_.fn);
    builder_.CreateCondBr(failed, fail, ok, llvm::MDBuilder(context_).createUnlikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    for (auto it = fs_.heap_buffers.rbegin(); it != fs_.heap_buffers.rend(); ++it) free_heap(*it);
    builder_.CreateRet(builder_.getInt32(-1));
    builder_.SetInsertPoint(ok);
  }

  void free_heap(llvm::Value* ptr) { call_runtime("temper_free", builder_.getVoidTy(), {ptr_type()}, {ptr}); }

  // An alloca in the entry block of the current function: allocated once per call, and
  // where SROA and mem2reg look for values to promote to registers.
  llvm::AllocaInst* entry_alloca(llvm::Type* type, int64_t alignment, const std::string& name) {
    llvm::BasicBlock& entry = fs_.fn->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* a = at_entry.CreateAlloca(type, nullptr, name);
    a->setAlignment(llvm::Align(alignment));
    return a;
  }

  // ---------------------------------------------------------------- statements

  void emit_stmt(const Stmt& s) {
    if (!s.defined()) return;
    if (auto* op = s.as<BufferStoreNode>()) {
      emit_store(op);
    } else if (auto* op = s.as<EvaluateNode>()) {
      emit_expr(op->value);
    } else if (auto* op = s.as<LetStmtNode>()) {
      llvm::Value* value = emit_expr(op->value);
      ScopedVar var(fs_, op->var, value, known_multiple(op->value));
      emit_stmt(op->body);
    } else if (auto* op = s.as<ForNode>()) {
      if (op->for_kind == ForKind::Parallel) {
        emit_parallel_loop(op);
      } else {
        emit_serial_loop(op);
      }
    } else if (auto* op = s.as<IfThenElseNode>()) {
      emit_if(op);
    } else if (auto* op = s.as<SeqStmtNode>()) {
      for (const Stmt& child : op->seq) emit_stmt(child);
    } else if (auto* op = s.as<AllocateNode>()) {
      emit_allocate(op);
    } else {
      TEMPER_CHECK(false, "the LLVM backend cannot emit a ", node_kind_name(s.kind()), " statement");
    }
  }

  static bool is_signed_expr(const Expr& e) { return !e.dtype().is_uint(); }

  void emit_serial_loop(const ForNode* op) {
    bool signed_loop = !op->loop_var.dtype().is_uint();
    llvm::Type* type = value_type(op->loop_var.dtype());
    llvm::Value* begin = builder_.CreateIntCast(emit_expr(op->min), type, is_signed_expr(op->min));
    llvm::Value* extent = builder_.CreateIntCast(emit_expr(op->extent), type, is_signed_expr(op->extent));
    llvm::Value* end = builder_.CreateAdd(begin, extent, op->loop_var.name() + ".end", false, signed_loop);
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, "for." + op->loop_var.name(), fs_.fn);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(context_, "for.body", fs_.fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(context_, "for.end", fs_.fn);
    builder_.CreateBr(header);
    builder_.SetInsertPoint(header);
    llvm::PHINode* iv = builder_.CreatePHI(begin->getType(), 2, op->loop_var.name());
    iv->addIncoming(begin, preheader);
    llvm::Value* more = signed_loop ? builder_.CreateICmpSLT(iv, end) : builder_.CreateICmpULT(iv, end);
    builder_.CreateCondBr(more, body, exit);
    builder_.SetInsertPoint(body);
    {
      ScopedVar loop_var(fs_, op->loop_var, iv, 1);
      emit_stmt(op->body);
    }
    llvm::Value* next = builder_.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", false, signed_loop);
    iv->addIncoming(next, builder_.GetInsertBlock());
    builder_.CreateBr(header);
    builder_.SetInsertPoint(exit);
  }

  // The loop body becomes `i32 body(loop var, captured...)` with noalias buffer pointers,
  // called from `i32 entry(i64 i, ptr closure)` that unpacks the closure; temper_parallel_for
  // runs entry. Inlining body into entry keeps the buffers' noalias as alias scopes.
  void emit_parallel_loop(const ForNode* op) {
    Captures captures = loop_body_captures(op);
    std::string base = str(func_name_, ".parallel.", parallel_count_++);
    llvm::Type* loop_type = value_type(op->loop_var.dtype());

    std::vector<llvm::Value*> values = {builder_.CreateIntCast(emit_expr(op->min), loop_type, is_signed_expr(op->min))};
    for (const Buffer& b : captures.buffers) values.push_back(buffer(b).ptr);
    for (const Var& v : captures.vars) values.push_back(fs_.vars.at(v.get()));
    std::vector<llvm::Type*> types;
    for (llvm::Value* v : values) types.push_back(v->getType());
    llvm::StructType* closure_type = llvm::StructType::create(context_, types, base + ".closure");

    llvm::Function* body = emit_parallel_body(op, captures, base, types);
    llvm::Function* entry = create_function(base, llvm::FunctionType::get(i32(), {i64(), ptr_type()}, false),
                                            llvm::GlobalValue::InternalLinkage);
    {
      llvm::IRBuilder<>::InsertPointGuard guard(builder_);
      builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", entry));
      entry->getArg(0)->setName("iteration");
      llvm::Value* closure = entry->getArg(1);
      closure->setName("closure");
      std::vector<llvm::Value*> args;
      llvm::Value* min = builder_.CreateLoad(types[0], builder_.CreateStructGEP(closure_type, closure, 0));
      args.push_back(builder_.CreateAdd(min, builder_.CreateIntCast(entry->getArg(0), loop_type, true)));
      for (size_t i = 1; i < types.size(); ++i) {
        args.push_back(builder_.CreateLoad(types[i], builder_.CreateStructGEP(closure_type, closure, i)));
      }
      builder_.CreateRet(builder_.CreateCall(body, args));
    }

    llvm::AllocaInst* closure = entry_alloca(closure_type, 8, base + ".closure");
    for (size_t i = 0; i < values.size(); ++i) {
      builder_.CreateStore(values[i], builder_.CreateStructGEP(closure_type, closure, i));
    }
    llvm::Value* extent = builder_.CreateIntCast(emit_expr(op->extent), i64(), !op->extent.dtype().is_uint());
    return_if_failed(
        call_runtime("temper_parallel_for", i32(), {i64(), ptr_type(), ptr_type()}, {extent, entry, closure}));
  }

  llvm::Function* emit_parallel_body(const ForNode* op, const Captures& captures, const std::string& base,
                                     const std::vector<llvm::Type*>& types) {
    llvm::Function* body = create_function(base + ".body", llvm::FunctionType::get(i32(), types, false),
                                           llvm::GlobalValue::InternalLinkage);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    FunctionState inner(body);
    body->getArg(0)->setName(op->loop_var.name());
    inner.vars[op->loop_var.get()] = body->getArg(0);
    unsigned arg = 1;
    for (const Buffer& b : captures.buffers) {
      BufferValue outer = buffer(b);
      mark_buffer_param(body, arg, outer.alignment);
      body->getArg(arg)->setName(b->name);
      inner.buffers[b.get()] = {body->getArg(arg++), outer.alignment};
    }
    for (const Var& v : captures.vars) {
      body->getArg(arg)->setName(v.name());
      inner.vars[v.get()] = body->getArg(arg++);
      auto m = fs_.multiples.find(v.get());
      if (m != fs_.multiples.end()) inner.multiples[v.get()] = m->second;
    }
    llvm::IRBuilder<>::InsertPointGuard guard(builder_);
    std::swap(fs_, inner);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", body));
    emit_stmt(op->body);
    builder_.CreateRet(builder_.getInt32(0));
    std::swap(fs_, inner);
    return body;
  }

  void emit_if(const IfThenElseNode* op) {
    llvm::Value* condition = emit_expr(op->condition);
    llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, "if.then", fs_.fn);
    llvm::BasicBlock* end = llvm::BasicBlock::Create(context_, "if.end", fs_.fn);
    llvm::BasicBlock* else_block =
        op->else_case.defined() ? llvm::BasicBlock::Create(context_, "if.else", fs_.fn) : end;
    builder_.CreateCondBr(condition, then_block, else_block);
    builder_.SetInsertPoint(then_block);
    emit_stmt(op->then_case);
    builder_.CreateBr(end);
    if (op->else_case.defined()) {
      builder_.SetInsertPoint(else_block);
      emit_stmt(op->else_case);
      builder_.CreateBr(end);
    }
    builder_.SetInsertPoint(end);
  }

  void emit_allocate(const AllocateNode* op) {
    const Buffer& b = op->buffer;
    llvm::Type* element = storage_type(b->dtype);
    if (allocate_on_stack(b)) {
      int64_t elements = std::max<int64_t>(*as_const_int(buffer_elements(b)), 1);
      llvm::AllocaInst* a = entry_alloca(llvm::ArrayType::get(element, elements), b->alignment, b->name);
      fs_.buffers[b.get()] = {a, b->alignment};
      emit_stmt(op->body);
      return;
    }
    int64_t element_bytes = module_->getDataLayout().getTypeAllocSize(element);
    llvm::Value* bytes = builder_.CreateMul(emit_expr(buffer_elements(b)), builder_.getInt64(element_bytes));
    llvm::FunctionCallee alloc =
        module_->getOrInsertFunction("temper_alloc", llvm::FunctionType::get(ptr_type(), {i64()}, false));
    if (auto* fn = llvm::dyn_cast<llvm::Function>(alloc.getCallee())) {
      // Like malloc: fresh memory no other pointer reaches, 64-byte aligned.
      fn->addRetAttr(llvm::Attribute::NoAlias);
      fn->addRetAttr(llvm::Attribute::getWithAlignment(context_, llvm::Align(64)));
    }
    llvm::Value* ptr = builder_.CreateCall(alloc, {bytes}, b->name);
    branch_to_failure_if(builder_.CreateIsNull(ptr));
    fs_.buffers[b.get()] = {ptr, 64};
    fs_.heap_buffers.push_back(ptr);
    emit_stmt(op->body);
    fs_.heap_buffers.pop_back();
    free_heap(ptr);
  }

  BufferValue buffer(const Buffer& b) {
    auto it = fs_.buffers.find(b.get());
    TEMPER_CHECK(it != fs_.buffers.end(), "buffer ", b->name, " is neither a parameter nor allocated in ", func_name_);
    return it->second;
  }

  // ---------------------------------------------------------------- memory

  // A number e is known to be a multiple of (1 when nothing is known).
  int64_t known_multiple(const Expr& e) {
    if (const int64_t* c = as_const_int(e))
      return *c == 0 ? kUnknownMultipleCap : std::min(std::abs(*c), kUnknownMultipleCap);
    if (auto* op = e.as<AddNode>()) return std::gcd(known_multiple(op->a), known_multiple(op->b));
    if (auto* op = e.as<SubNode>()) return std::gcd(known_multiple(op->a), known_multiple(op->b));
    if (auto* op = e.as<MulNode>()) return std::min(known_multiple(op->a) * known_multiple(op->b), kUnknownMultipleCap);
    if (auto* op = e.as<CastNode>()) return op->value.dtype().is_integer() ? known_multiple(op->value) : 1;
    if (auto* op = e.as<VarNode>()) {
      auto it = fs_.multiples.find(op);
      return it == fs_.multiples.end() ? 1 : it->second;
    }
    return 1;
  }

  // The alignment of element `index` of b: the buffer's, as far as the offset keeps it.
  llvm::Align access_alignment(const BufferValue& b, const Expr& index, int64_t element_bytes) {
    int64_t offset_alignment = largest_power_of_two_dividing(known_multiple(index)) * element_bytes;
    return llvm::Align(std::max<int64_t>(std::min(b.alignment, offset_alignment), 1));
  }

  llvm::Value* index_value(const Expr& index) {
    llvm::Value* v = emit_expr(index);
    llvm::Type* type = index.dtype().is_vector() ? llvm::FixedVectorType::get(i64(), index.dtype().lanes()) : i64();
    return builder_.CreateIntCast(v, type, !index.dtype().is_uint());
  }

  llvm::Value* emit_load(const BufferLoadNode* op) {
    BufferValue b = buffer(op->buffer);
    Expr index = flat_index(op->indices);
    llvm::Type* element = storage_type(op->buffer->dtype);
    int64_t element_bytes = module_->getDataLayout().getTypeAllocSize(element);
    int lanes = op->dtype.lanes();
    llvm::Value* value;
    if (lanes == 1) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(index));
      value = builder_.CreateAlignedLoad(element, ptr, access_alignment(b, index, element_bytes));
    } else if (auto* ramp = index.as<RampNode>(); ramp && is_one(ramp->stride)) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(ramp->base));
      value = builder_.CreateAlignedLoad(llvm::FixedVectorType::get(element, lanes), ptr,
                                         access_alignment(b, ramp->base, element_bytes));
    } else if (auto* broadcast = index.as<BroadcastNode>()) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(broadcast->value));
      value = builder_.CreateVectorSplat(
          lanes, builder_.CreateAlignedLoad(element, ptr, access_alignment(b, broadcast->value, element_bytes)));
    } else if (int64_t stride = small_constant_stride(index); stride > 1) {
      value = emit_strided_load(b, element, element_bytes, index.as<RampNode>()->base, stride, lanes);
    } else {
      llvm::Value* ptrs = builder_.CreateInBoundsGEP(element, b.ptr, index_value(index));
      value = builder_.CreateMaskedGather(llvm::FixedVectorType::get(element, lanes), ptrs, llvm::Align(element_bytes));
    }
    if (op->buffer->dtype.is_bool())
      value = builder_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
    return value;
  }

  // The stride of a ramp index by a small constant (a window striding over columns, the
  // even elements of a row), else 0: such a load reads the contiguous run it spans.
  static int64_t small_constant_stride(const Expr& index) {
    constexpr int64_t kMaxStride = 4;
    auto* ramp = index.as<RampNode>();
    if (!ramp) return 0;
    const int64_t* stride = as_const_int(ramp->stride);
    return stride && *stride > 1 && *stride <= kMaxStride ? *stride : 0;
  }

  // lanes elements `stride` apart from base: the contiguous run from the first to the last
  // of them (lanes * stride - stride + 1 elements, a masked load of lanes * stride that
  // never touches memory past the last element it needs), then a shuffle that keeps every
  // stride-th element -- on AVX-512 two loads and a permute, where a gather moves one
  // element at a time.
  llvm::Value* emit_strided_load(const BufferValue& b, llvm::Type* element, int64_t element_bytes, const Expr& base,
                                 int64_t stride, int lanes) {
    int wide = static_cast<int>(lanes * stride);
    int needed = static_cast<int>((lanes - 1) * stride + 1);
    std::vector<llvm::Constant*> mask;
    std::vector<int> keep;
    for (int i = 0; i < wide; ++i) mask.push_back(builder_.getInt1(i < needed));
    for (int i = 0; i < lanes; ++i) keep.push_back(static_cast<int>(i * stride));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(base));
    llvm::Value* run = builder_.CreateMaskedLoad(llvm::FixedVectorType::get(element, wide), ptr,
                                                 access_alignment(b, base, element_bytes),
                                                 llvm::ConstantVector::get(mask));
    return builder_.CreateShuffleVector(run, keep);
  }

  void emit_store(const BufferStoreNode* op) {
    BufferValue b = buffer(op->buffer);
    Expr index = flat_index(op->indices);
    llvm::Type* element = storage_type(op->buffer->dtype);
    int64_t element_bytes = module_->getDataLayout().getTypeAllocSize(element);
    llvm::Value* value = emit_expr(op->value);
    if (op->buffer->dtype.is_bool()) {
      llvm::Type* stored =
          value->getType()->isVectorTy()
              ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(element, op->value.dtype().lanes()))
              : element;
      value = builder_.CreateZExt(value, stored);
    }
    if (op->value.dtype().is_scalar()) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(index));
      builder_.CreateAlignedStore(value, ptr, access_alignment(b, index, element_bytes));
    } else if (auto* ramp = index.as<RampNode>(); ramp && is_one(ramp->stride)) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(element, b.ptr, index_value(ramp->base));
      builder_.CreateAlignedStore(value, ptr, access_alignment(b, ramp->base, element_bytes));
    } else {
      // Lanes are written in order, so with repeated addresses the last lane wins.
      llvm::Value* ptrs = builder_.CreateInBoundsGEP(element, b.ptr, index_value(index));
      builder_.CreateMaskedScatter(value, ptrs, llvm::Align(element_bytes));
    }
  }

  // ---------------------------------------------------------------- expressions

  llvm::Value* emit(const IntImmNode* op) {
    return llvm::ConstantInt::get(value_type(op->dtype), op->value, op->dtype.is_int());
  }
  llvm::Value* emit(const FloatImmNode* op) { return llvm::ConstantFP::get(value_type(op->dtype), op->value); }
  llvm::Value* emit(const VarNode* op) {
    auto it = fs_.vars.find(op);
    TEMPER_CHECK(it != fs_.vars.end(), "variable ", op->name, " used before it is bound in ", func_name_);
    return it->second;
  }
  llvm::Value* emit(const ReduceNode*) {
    TEMPER_CHECK(false, "a Reduce reached the LLVM backend in ", func_name_);
    return nullptr;
  }

  llvm::Value* emit(const CastNode* op) {
    DataType from = op->value.dtype().element_of();
    DataType to = op->dtype.element_of();
    llvm::Value* v = emit_expr(op->value);
    llvm::Type* type = value_type(op->dtype);
    if (to.is_bool()) {
      llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
      return from.is_float() ? builder_.CreateFCmpUNE(v, zero) : builder_.CreateICmpNE(v, zero);
    }
    if (from.is_handle() || to.is_handle()) {
      return to.is_handle() ? builder_.CreateIntToPtr(v, type) : builder_.CreatePtrToInt(v, type);
    }
    if (from.is_float() && to.is_float()) return builder_.CreateFPCast(v, type);
    if (from.is_float()) return to.is_int() ? builder_.CreateFPToSI(v, type) : builder_.CreateFPToUI(v, type);
    if (to.is_float()) return from.is_int() ? builder_.CreateSIToFP(v, type) : builder_.CreateUIToFP(v, type);
    return builder_.CreateIntCast(v, type, from.is_int());
  }

  template <NodeKind K>
  llvm::Value* emit(const BinaryNode<K>* op) {
    DataType t = op->a.dtype().element_of();
    llvm::Value* a = emit_expr(op->a);
    llvm::Value* b = emit_expr(op->b);
    bool is_float = t.is_float();
    bool is_signed = t.is_int();
    // Signed int32/int64 arithmetic does not overflow (as in C); narrower types wrap.
    bool nsw = is_signed && t.bits() >= 32;
    if constexpr (K == NodeKind::Add)
      return is_float ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b, "", false, nsw);
    if constexpr (K == NodeKind::Sub)
      return is_float ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b, "", false, nsw);
    if constexpr (K == NodeKind::Mul)
      return is_float ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b, "", false, nsw);
    if constexpr (K == NodeKind::Div) {
      if (is_float) return builder_.CreateFDiv(a, b);
      return is_signed ? builder_.CreateSDiv(a, b) : builder_.CreateUDiv(a, b);
    }
    if constexpr (K == NodeKind::Mod) return is_signed ? builder_.CreateSRem(a, b) : builder_.CreateURem(a, b);
    if constexpr (K == NodeKind::FloorDiv) return is_signed ? floor_div(op->b, a, b) : builder_.CreateUDiv(a, b);
    if constexpr (K == NodeKind::FloorMod) return is_signed ? floor_mod(op->b, a, b) : builder_.CreateURem(a, b);
    if constexpr (K == NodeKind::Min) return builder_.CreateSelect(less(t, a, b), a, b);
    if constexpr (K == NodeKind::Max) return builder_.CreateSelect(less(t, b, a), a, b);
    if constexpr (K == NodeKind::EQ) return is_float ? builder_.CreateFCmpOEQ(a, b) : builder_.CreateICmpEQ(a, b);
    if constexpr (K == NodeKind::NE) return is_float ? builder_.CreateFCmpUNE(a, b) : builder_.CreateICmpNE(a, b);
    if constexpr (K == NodeKind::LT) return less(t, a, b);
    if constexpr (K == NodeKind::GT) return less(t, b, a);
    if constexpr (K == NodeKind::LE) {
      if (is_float) return builder_.CreateFCmpOLE(a, b);
      return is_signed ? builder_.CreateICmpSLE(a, b) : builder_.CreateICmpULE(a, b);
    }
    if constexpr (K == NodeKind::GE) {
      if (is_float) return builder_.CreateFCmpOGE(a, b);
      return is_signed ? builder_.CreateICmpSGE(a, b) : builder_.CreateICmpUGE(a, b);
    }
    if constexpr (K == NodeKind::And) return builder_.CreateAnd(a, b);
    if constexpr (K == NodeKind::Or) return builder_.CreateOr(a, b);
  }

  llvm::Value* less(DataType t, llvm::Value* a, llvm::Value* b) {
    if (t.is_float()) return builder_.CreateFCmpOLT(a, b);
    return t.is_int() ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b);
  }

  // A positive power-of-two divisor, as a constant (possibly broadcast), or 0.
  static int64_t positive_power_of_two(const Expr& divisor) {
    Expr d = divisor;
    if (auto* bc = d.as<BroadcastNode>()) d = bc->value;
    const int64_t* c = as_const_int(d);
    return c && *c > 0 && (*c & (*c - 1)) == 0 ? *c : 0;
  }

  // Division rounding toward negative infinity: q - 1 when the remainder is nonzero and
  // its sign differs from the divisor's. By a positive power of two, a shift.
  llvm::Value* floor_div(const Expr& divisor, llvm::Value* a, llvm::Value* b) {
    if (int64_t p = positive_power_of_two(divisor)) {
      return builder_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), __builtin_ctzll(p)));
    }
    llvm::Value* q = builder_.CreateSDiv(a, b);
    llvm::Value* adjust = remainder_needs_adjusting(a, b);
    return builder_.CreateSub(q, builder_.CreateZExt(adjust, q->getType()));
  }

  llvm::Value* floor_mod(const Expr& divisor, llvm::Value* a, llvm::Value* b) {
    if (int64_t p = positive_power_of_two(divisor)) {
      return builder_.CreateAnd(a, llvm::ConstantInt::get(a->getType(), p - 1));
    }
    llvm::Value* r = builder_.CreateSRem(a, b);
    return builder_.CreateSelect(remainder_needs_adjusting(a, b), builder_.CreateAdd(r, b), r);
  }

  llvm::Value* remainder_needs_adjusting(llvm::Value* a, llvm::Value* b) {
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* signs_differ = builder_.CreateXor(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero));
    return builder_.CreateAnd(builder_.CreateICmpNE(r, zero), signs_differ);
  }

  llvm::Value* emit(const NotNode* op) { return builder_.CreateNot(emit_expr(op->a)); }

  llvm::Value* emit(const SelectNode* op) {
    return builder_.CreateSelect(emit_expr(op->condition), emit_expr(op->true_value), emit_expr(op->false_value));
  }

  llvm::Value* emit(const RampNode* op) {
    llvm::Type* element = value_type(op->dtype.element_of());
    std::vector<llvm::Constant*> steps;
    for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(element, i));
    llvm::Value* base = builder_.CreateVectorSplat(op->lanes, emit_expr(op->base));
    llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, emit_expr(op->stride));
    bool nsw = op->dtype.is_int() && op->dtype.bits() >= 32;
    return builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantVector::get(steps), "", false, nsw), "",
                              false, nsw);
  }

  llvm::Value* emit(const BroadcastNode* op) { return builder_.CreateVectorSplat(op->lanes, emit_expr(op->value)); }

  llvm::Value* emit(const LetNode* op) {
    llvm::Value* value = emit_expr(op->value);
    ScopedVar var(fs_, op->var, value, known_multiple(op->value));
    return emit_expr(op->body);
  }

  llvm::Value* emit(const BufferLoadNode* op) { return emit_load(op); }

  llvm::Value* emit(const CallNode* op) {
    switch (op->call_kind) {
      case CallKind::Pure:
        return emit_math(op);
      case CallKind::Extern:
        return emit_extern(op);
      case CallKind::Intrinsic: {
        const auto* load = op->args[0].as<BufferLoadNode>();
        BufferValue b = buffer(load->buffer);
        return builder_.CreateInBoundsGEP(storage_type(load->buffer->dtype), b.ptr,
                                          index_value(flat_index(load->indices)));
      }
    }
    return nullptr;
  }

  // After every emit overload, the BinaryNode template included: clang instantiates a
  // member template the generic lambda calls only when it is defined before it.
  llvm::Value* emit_expr(const Expr& e) {
    TEMPER_CHECK(e.defined(), "undefined expression in ", func_name_);
    return dispatch(e.get(), [&](const auto* op) -> llvm::Value* {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(op)>>;
      if constexpr (std::is_base_of_v<ExprNode, T>) {
        return emit(op);
      } else {
        TEMPER_CHECK(false, "statement in expression position");
        return nullptr;
      }
    });
  }

  llvm::Value* emit_extern(const CallNode* op) {
    std::vector<llvm::Value*> args;
    std::vector<llvm::Type*> types;
    for (const Expr& arg : op->args) {
      args.push_back(emit_expr(arg));
      types.push_back(args.back()->getType());
    }
    llvm::FunctionCallee fn =
        module_->getOrInsertFunction(op->name, llvm::FunctionType::get(value_type(op->dtype), types, false));
    return builder_.CreateCall(fn, args);
  }

  // float16 math computes in float32, as the C backend does.
  llvm::Value* emit_math(const CallNode* op) {
    DataType t = op->dtype;
    bool widen = t.bits() == 16;
    llvm::Type* compute_type = widen ? value_type(DataType::float32().with_lanes(t.lanes())) : value_type(t);
    std::vector<llvm::Value*> args;
    for (const Expr& arg : op->args) {
      llvm::Value* v = emit_expr(arg);
      args.push_back(widen ? builder_.CreateFPExt(v, compute_type) : v);
    }
    llvm::Value* result = math(op->name, compute_type, args);
    return widen ? builder_.CreateFPTrunc(result, value_type(t)) : result;
  }

  llvm::Value* math(const std::string& name, llvm::Type* type, const std::vector<llvm::Value*>& args) {
    if (type->getScalarType()->isFloatTy()) {
      // float32 (and float16, computed in float32) in vector registers, never libm per lane.
      using VectorMath = llvm::Value* (*)(llvm::IRBuilder<>&, llvm::Value*);
      static const std::unordered_map<std::string, VectorMath> kVectorMath = {{"exp", vector_exp},
                                                                              {"log", vector_log},
                                                                              {"tanh", vector_tanh},
                                                                              {"erf", vector_erf},
                                                                              {"sigmoid", vector_sigmoid}};
      if (auto it = kVectorMath.find(name); it != kVectorMath.end()) return it->second(builder_, args[0]);
      if (name == "pow") return vector_pow(builder_, args[0], args[1]);
    }
    static const std::unordered_map<std::string, llvm::Intrinsic::ID> kIntrinsics = {
        {"exp", llvm::Intrinsic::exp},   {"log", llvm::Intrinsic::log},     {"sqrt", llvm::Intrinsic::sqrt},
        {"fabs", llvm::Intrinsic::fabs}, {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil},
        {"pow", llvm::Intrinsic::pow},   {"fma", llvm::Intrinsic::fma}};
    if (auto it = kIntrinsics.find(name); it != kIntrinsics.end()) {
      return builder_.CreateIntrinsic(it->second, {type}, args);
    }
    llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
    if (name == "rsqrt") return builder_.CreateFDiv(one, builder_.CreateIntrinsic(llvm::Intrinsic::sqrt, {type}, args));
    if (name == "sigmoid") {
      llvm::Value* e = builder_.CreateIntrinsic(llvm::Intrinsic::exp, {type}, {builder_.CreateFNeg(args[0])});
      return builder_.CreateFDiv(one, builder_.CreateFAdd(one, e));
    }
    TEMPER_CHECK(math_function_arity(name) == 1, "unknown math function ", name);
    return libm_call(name, type, args[0]);
  }

  // A libm function of one argument (tanh and erf of float64, the trigonometric ones),
  // lane by lane for vectors.
  llvm::Value* libm_call(const std::string& name, llvm::Type* type, llvm::Value* x) {
    llvm::Type* scalar = type->getScalarType();
    std::string symbol = scalar->isFloatTy() ? name + "f" : name;
    llvm::FunctionCallee fn = module_->getOrInsertFunction(symbol, llvm::FunctionType::get(scalar, {scalar}, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
      f->setDoesNotThrow();
      f->setWillReturn();
      f->setDoesNotAccessMemory();
    }
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    if (!vector) return builder_.CreateCall(fn, {x});
    llvm::Value* result = llvm::PoisonValue::get(type);
    for (unsigned i = 0; i < vector->getNumElements(); ++i) {
      llvm::Value* lane = builder_.CreateCall(fn, {builder_.CreateExtractElement(x, i)});
      result = builder_.CreateInsertElement(result, lane, i);
    }
    return result;
  }

  llvm::LLVMContext& context_;
  llvm::TargetMachine& tm_;
  llvm::IRBuilder<> builder_;
  std::unique_ptr<llvm::Module> module_;
  llvm::StructType* tensor_type_ = nullptr;
  std::unordered_map<std::string, llvm::Value*> strings_;
  FunctionState fs_;
  std::string func_name_;
  int parallel_count_ = 0;
};

}  // namespace

std::unique_ptr<llvm::Module> translate_to_llvm(const std::vector<PrimFunc>& lowered, llvm::LLVMContext& context,
                                                llvm::TargetMachine& tm) {
  return CodeGenLLVM(context, tm).translate(lowered);
}

}  // namespace temper
