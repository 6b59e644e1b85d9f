// The LLVM backend's own guarantees: what the generated IR and assembly look like, the
// JIT's symbol resolution, export to object files and shared libraries, target errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/host_cpu.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/runtime/shared_library_module.h"

// Called by generated code through the process's exported symbols.
extern "C" int32_t temper_test_add_one(float* x, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] += 1.0f;
  return 0;
}

namespace temper {
namespace {

const DataType f32 = DataType::float32();
const Target kNative = Target::parse("llvm -mcpu=native");

Expr f32_const(double v) {
  return make_const(f32, v);
}

// C[16 i .. 16 i + 16] = A[...] * B[...] + C[...], 8 vectors of 16 lanes.
PrimFunc vector_multiply_add() {
  Buffer a("A", f32, {128}), b("B", f32, {128}), c("C", f32, {128});
  Var i("i");
  Expr lanes = ramp(i * 16, 1, 16);
  Stmt body = store(c, load(a, {lanes}) * load(b, {lanes}) + load(c, {lanes}), {lanes});
  return {"vector_fma", {a, b, c}, make_for(i, 0, 8, ForKind::Serial, body)};
}

// y[i] = sum_k A[i, k] x[k], rows in parallel, the sum in a "local" accumulator.
PrimFunc matvec() {
  Buffer a("A", f32, {64, 100}), x("x", f32, {100}), y("y", f32, {64});
  Buffer acc("acc", f32, {1}, "local");
  Var i("i"), k("k");
  Stmt accumulate =
      make_for(k, 0, 100, ForKind::Serial, store(acc, load(acc, {0}) + load(a, {i * 100 + k}) * load(x, {k}), {0}));
  Stmt row = allocate(acc, seq({store(acc, f32_const(0.0), {0}), accumulate, store(y, load(acc, {0}), {i})}));
  return {"matvec", {a, x, y}, make_for(i, 0, 64, ForKind::Parallel, row)};
}

// Out = tanh(X) then exp, 8 lanes at a time, plus a scalar sigmoid of X[0] into Out[0].
// float32 tanh, exp and sigmoid, then float64 tanh and exp, on vectors and a scalar.
PrimFunc vector_math() {
  DataType f64 = DataType::float64();
  Buffer x("X", f32, {16}), out("Out", f32, {16}), xd("Xd", f64, {8}), outd("Outd", f64, {8});
  Var i("i"), j("j");
  Expr lanes = ramp(i * 8, 1, 8);
  DataType f32x8 = f32.with_lanes(8);
  Stmt body = store(out, call_pure(f32x8, "exp", {call_pure(f32x8, "tanh", {load(x, {lanes})})}), {lanes});
  Stmt first = store(out, call_pure(f32, "sigmoid", {load(x, {0})}), {0});
  Expr lanes_d = ramp(j * 4, 1, 4);
  DataType f64x4 = f64.with_lanes(4);
  Stmt body_d = store(outd, call_pure(f64x4, "exp", {call_pure(f64x4, "tanh", {load(xd, {lanes_d})})}), {lanes_d});
  return {"vector_math",
          {x, out, xd, outd},
          seq({make_for(i, 0, 2, ForKind::Serial, body), first, make_for(j, 0, 2, ForKind::Serial, body_d)})};
}

// Out[i] = A[i] + 1 in parallel through a heap temporary, then temper_test_add_one(&Out[0], 8).
PrimFunc runtime_heavy() {
  Buffer a("A", f32, {1024}), out("Out", f32, {1024}), tmp("tmp", f32, {1024});
  Var i("i"), j("j");
  Stmt fill = make_for(i, 0, 1024, ForKind::Parallel, store(tmp, load(a, {i}) + f32_const(1.0), {i}));
  Stmt copy = make_for(j, 0, 1024, ForKind::Serial, store(out, load(tmp, {j}), {j}));
  Stmt call = evaluate(call_extern(DataType::int32(), "temper_test_add_one",
                                   {call_intrinsic(DataType::handle(), "address_of", {load(out, {0})}), Expr(8)}));
  return {"runtime_heavy", {a, out}, seq({allocate(tmp, seq({fill, copy})), call})};
}

void check_runtime_heavy(const PackedFunc& f) {
  NDArray a = NDArray::random({1024}, f32, 1), out = NDArray::zeros({1024}, f32);
  f({&a, &out});
  for (int k = 0; k < 1024; ++k) ASSERT_EQ(out.get(k), static_cast<float>(a.get(k) + 1) + (k < 8 ? 1.0f : 0.0f)) << k;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(CodegenLLVM, ParametersAreNoaliasAlignedAndVectorsExplicit) {
  std::string ir = emit_llvm_ir({vector_multiply_add()}, kNative, false);
  EXPECT_TRUE(contains(ir,
                       "define internal i32 @vector_fma.compute(ptr noalias align 64 %A, ptr noalias align 64 %B, "
                       "ptr noalias align 64 %C)"))
      << ir;
  EXPECT_TRUE(contains(ir, "load <16 x float>, ptr")) << ir;
  EXPECT_TRUE(contains(ir, "store <16 x float>")) << ir;
  // 16 i floats from a 64-byte aligned base stay 64-byte aligned.
  EXPECT_TRUE(contains(ir, "align 64\n")) << ir;
  EXPECT_TRUE(contains(ir, "fmul contract <16 x float>")) << ir;
  EXPECT_FALSE(contains(ir, "reassoc")) << ir;
  EXPECT_TRUE(contains(ir, "define i32 @temper_fn_vector_fma(ptr %args, i32 %num_args)")) << ir;
}

// A load by a small constant stride (every other column of a window striding by 2) is one
// masked load of the contiguous run and a shuffle keeping every stride-th element, not a
// gather of one element at a time; a large stride is still a gather.
TEST(CodegenLLVM, SmallConstantStridesLoadARunAndShuffle) {
  Buffer x("X", f32, {256}), y("Y", f32, {128});
  Var i("i");
  Stmt body = store(y, load(x, {ramp(i * 32, 2, 16)}), {ramp(i * 16, 1, 16)});
  std::string ir = emit_llvm_ir({{"even", {x, y}, make_for(i, 0, 8, ForKind::Serial, body)}}, kNative, false);
  EXPECT_TRUE(contains(ir, "<32 x float> @llvm.masked.load.v32f32")) << ir;
  EXPECT_TRUE(contains(ir, "shufflevector <32 x float>")) << ir;
  EXPECT_FALSE(contains(ir, "masked.gather")) << ir;
  Buffer wide("X", f32, {2048});
  Stmt far = store(y, load(wide, {ramp(i * 16, 8, 16)}), {ramp(i * 16, 1, 16)});
  ir = emit_llvm_ir({{"far", {wide, y}, make_for(i, 0, 8, ForKind::Serial, far)}}, kNative, false);
  EXPECT_TRUE(contains(ir, "masked.gather")) << ir;
}

TEST(CodegenLLVM, LocalAccumulatorIsAnEntryBlockAllocaThatO3Promotes) {
  std::string ir = emit_llvm_ir({matvec()}, kNative, false);
  EXPECT_TRUE(contains(ir,
                       "@matvec.parallel.0.body(i32 %i, ptr noalias align 64 %A, ptr noalias align 64 %x, ptr "
                       "noalias align 64 %y) #1 {\nentry:\n  %acc = alloca [1 x float], align 64\n"))
      << ir;
  std::string optimized = emit_llvm_ir({matvec()}, kNative, true);
  EXPECT_FALSE(contains(optimized, "alloca [1 x float]")) << optimized;
  // The body was inlined into the entry point with its buffers' noalias as scopes.
  EXPECT_TRUE(contains(optimized, "!alias.scope")) << optimized;
}

TEST(CodegenLLVM, ParallelLoopIsOutlinedAndRunByTheRuntime) {
  std::string ir = emit_llvm_ir({matvec()}, kNative, false);
  EXPECT_TRUE(contains(ir, "define internal i32 @matvec.parallel.0(i64 %iteration, ptr %closure)")) << ir;
  EXPECT_TRUE(
      contains(ir, "call i32 @temper_parallel_for(i64 64, ptr @matvec.parallel.0, ptr %matvec.parallel.0.closure)"))
      << ir;
}

TEST(CodegenLLVM, Float32MathIsInlineCodeFloat64MathCallsLibmPerLane) {
  std::string ir = emit_llvm_ir({vector_math()}, kNative, false);
  // float32: vector_math.cpp's code, no call (test_vector_math checks its accuracy).
  EXPECT_FALSE(contains(ir, "float @llvm.exp")) << ir;
  EXPECT_FALSE(contains(ir, "@tanhf")) << ir;
  EXPECT_FALSE(contains(ir, "@expf")) << ir;
  // float64: LLVM's exp intrinsic, and libm's tanh once per lane.
  EXPECT_TRUE(contains(ir, "call contract <4 x double> @llvm.exp.v4f64")) << ir;
  std::regex tanh_call("call( contract)? double @tanh\\(");
  auto calls = std::distance(std::sregex_iterator(ir.begin(), ir.end(), tanh_call), std::sregex_iterator());
  EXPECT_EQ(calls, 4) << ir;
}

TEST(CodegenLLVM, AssemblyOfAVectorMultiplyAddUsesFma) {
  if (!host_has_feature("fma")) GTEST_SKIP() << "the host CPU has no FMA";
  std::string assembly = emit_asm({vector_multiply_add()}, kNative);
  EXPECT_TRUE(contains(assembly, "vfmadd")) << assembly;
}

TEST(CodegenLLVM, GenericCpuRunsFloat16ThroughLibgccConversions) {
  DataType f16 = DataType::float16();
  Buffer a("A", f16, {16}), c("C", f16, {16});
  Var i("i");
  PrimFunc f{
      "half_double", {a, c}, make_for(i, 0, 16, ForKind::Serial, store(c, load(a, {i}) * make_const(f16, 2.0), {i}))};
  std::unique_ptr<Module> module = build_llvm({f}, Target::parse("llvm"));
  NDArray x = NDArray::random({16}, f16, 2, -100, 100), y = NDArray::zeros({16}, f16);
  module->get_function("half_double")({&x, &y});
  for (int k = 0; k < 16; ++k) EXPECT_EQ(y.get(k), 2 * x.get(k)) << k;
}

TEST(CodegenLLVM, JitResolvesRuntimeAndProcessSymbolsAndMeasuresTime) {
  LLVMCompileTimes times;
  std::unique_ptr<Module> module = build_llvm({runtime_heavy()}, kNative, &times);
  EXPECT_GT(times.emit_ms, 0);
  EXPECT_GT(times.optimize_ms, 0);
  EXPECT_GT(times.jit_ms, 0);
  PackedFunc f = module->get_function("runtime_heavy");
  module.reset();  // the function keeps the JIT session alive
  check_runtime_heavy(f);
}

TEST(CodegenLLVM, UnknownExternSymbolFailsAtBuild) {
  Buffer a("A", f32, {4});
  PrimFunc f{"calls_nothing", {a}, evaluate(call_extern(DataType::int32(), "temper_test_no_such_symbol", {}))};
  try {
    build_llvm({f}, kNative);
    FAIL() << "an unresolvable symbol was accepted";
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "temper_test_no_such_symbol")) << e.what();
  }
}

TEST(CodegenLLVM, UnknownFunctionNameIsAUserError) {
  std::unique_ptr<Module> module = build_llvm({vector_multiply_add()}, kNative);
  EXPECT_THROW(module->get_function("vector_fms"), UserError);
}

TEST(CodegenLLVM, ExportsObjectFilesAndSharedLibrariesThatLoadBack) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("temper-export-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string object = (dir / "module.o").string();
  export_llvm({runtime_heavy(), matvec()}, kNative, object);
  std::ifstream in(object, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4),
            "\x7f"
            "ELF");

  std::string library = (dir / "module.so").string();
  export_llvm({runtime_heavy(), matvec()}, kNative, library);
  EXPECT_FALSE(std::filesystem::exists(library + ".tmp.o"));
  std::unique_ptr<Module> module = load_shared_library(library);
  check_runtime_heavy(module->get_function("runtime_heavy"));
  NDArray a = NDArray::random({64, 100}, f32, 3), x = NDArray::random({100}, f32, 4), y = NDArray::zeros({64}, f32);
  module->get_function("matvec")({&a, &x, &y});
  for (int i = 0; i < 64; ++i) {
    double sum = 0;
    for (int k = 0; k < 100; ++k) sum += a.get(i * 100 + k) * x.get(k);
    EXPECT_NEAR(y.get(i), sum, 1e-4) << i;
  }
  EXPECT_THROW(module->get_function("no_such_function"), UserError);
  std::filesystem::remove_all(dir);
}

TEST(CodegenLLVM, ExportNeedsAKnownExtension) {
  try {
    export_llvm({matvec()}, kNative, "/tmp/module.dll");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_TRUE(contains(e.what(), "object file (.o) or a shared library (.so)")) << e.what();
  }
}

TEST(CodegenLLVM, UnknownCpuOrFeatureOrTargetKindIsAUserError) {
  auto error_of = [](const std::string& target) -> std::string {
    try {
      build_llvm({matvec()}, Target::parse(target));
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_TRUE(contains(error_of("llvm -mcpu=not-a-cpu"), "unknown CPU 'not-a-cpu'"));
  EXPECT_TRUE(contains(error_of("llvm -mattr=+not-a-feature"), "unknown CPU feature 'not-a-feature'"));
  EXPECT_TRUE(contains(error_of("c"), "compiles for an 'llvm' target, got 'c'"));
}

TEST(CodegenLLVM, HostCpuIsDescribed) {
  EXPECT_FALSE(host_cpu_name().empty());
  std::string features = host_cpu_features();
#if defined(__x86_64__)
  EXPECT_TRUE(contains(features, "+sse2")) << features;
  EXPECT_TRUE(host_has_feature("sse2"));
#endif
  EXPECT_FALSE(host_has_feature("not-a-feature"));
}

}  // namespace
}  // namespace temper
