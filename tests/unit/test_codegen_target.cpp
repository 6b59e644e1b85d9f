// Target strings: parsing, printing back, and the errors for what is not a target.
#include <gtest/gtest.h>

#include "compiler/ir/error.h"
#include "compiler/target/target.h"

namespace temper {
namespace {

std::string parse_error(const std::string& text) {
  try {
    Target::parse(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Target, ParsesKindsAndOptions) {
  Target plain = Target::parse("llvm");
  EXPECT_EQ(plain.kind, Target::Kind::LLVM);
  EXPECT_EQ(plain.mcpu, "");
  EXPECT_TRUE(plain.mattrs.empty());
  EXPECT_EQ(plain.num_cores, 0);

  Target t = Target::parse("llvm -mcpu=skylake-avx512 -mattr=+avx512f,+fma,-avx512vnni -num-cores=2");
  EXPECT_EQ(t.mcpu, "skylake-avx512");
  EXPECT_EQ(t.mattrs, (std::vector<std::string>{"+avx512f", "+fma", "-avx512vnni"}));
  EXPECT_EQ(t.num_cores, 2);
  EXPECT_EQ(Target::parse("  c   -mcpu=native ").kind, Target::Kind::C);
}

TEST(Target, PrintsBackCanonically) {
  for (const char* text : {"llvm", "llvm -mcpu=native", "llvm -mcpu=skylake-avx512 -mattr=+avx512f,+fma", "c",
                           "llvm -mcpu=znver3 -num-cores=4"}) {
    Target t = Target::parse(text);
    EXPECT_EQ(t.to_string(), text);
    EXPECT_EQ(Target::parse(t.to_string()), t);
  }
  EXPECT_EQ(Target::parse("llvm -num-cores=4 -mcpu=native").to_string(), "llvm -mcpu=native -num-cores=4");
}

TEST(Target, ErrorsNameWhatIsWrong) {
  EXPECT_EQ(parse_error("cuda2 -arch=sm_90"),
            "unknown target kind 'cuda2' in target 'cuda2 -arch=sm_90': expected 'llvm', 'c', 'cuda' or 'opencl'");
  EXPECT_EQ(
      parse_error("llvm -mcpu=native -opt-level=3"),
      "unknown option '-opt-level' in target 'llvm -mcpu=native -opt-level=3': the options of llvm are -mcpu=<cpu>, "
      "-mattr=<+feature,-feature>, -num-cores=<n>");
  EXPECT_EQ(parse_error(""), "empty target string: use e.g. 'llvm -mcpu=native', 'c', 'cuda' or 'opencl'");
  EXPECT_EQ(parse_error("llvm -mattr=avx2"),
            "bad feature 'avx2' in -mattr of target 'llvm -mattr=avx2': write +feature to add one, -feature to remove "
            "one");
  EXPECT_EQ(parse_error("llvm -num-cores=two"),
            "-num-cores in target 'llvm -num-cores=two' must be a positive "
            "integer, got 'two'");
  EXPECT_EQ(parse_error("llvm -num-cores=99999999999"),
            "-num-cores in target 'llvm -num-cores=99999999999' must be at most 65536, got '99999999999'");
  EXPECT_EQ(parse_error("llvm -mcpu"), "option -mcpu in target 'llvm -mcpu' needs a value: -mcpu=...");
  EXPECT_EQ(parse_error("llvm -mcpu=a -mcpu=b"), "option -mcpu is given twice in target 'llvm -mcpu=a -mcpu=b'");
  EXPECT_EQ(parse_error("cuda -mcpu=native"),
            "unknown option '-mcpu' in target 'cuda -mcpu=native': the options of cuda are -arch=<sm_XY>, "
            "-device=<n>, -max_threads_per_block=<n>, -max_shared_memory_per_block=<bytes>");
  EXPECT_EQ(parse_error("cuda -arch=compute_90"),
            "-arch in target 'cuda -arch=compute_90' must name a CUDA architecture like sm_80 or sm_90, got "
            "'compute_90'");
  EXPECT_EQ(parse_error("opencl -max_threads_per_block=0"),
            "-max_threads_per_block in target 'opencl -max_threads_per_block=0' must be a positive integer, got '0'");
  EXPECT_EQ(parse_error("opencl -arch=sm_90"),
            "unknown option '-arch' in target 'opencl -arch=sm_90': the options of opencl are -device=<n>, "
            "-max_threads_per_block=<n>, -max_shared_memory_per_block=<bytes>");
}

TEST(Target, ParsesGpuTargets) {
  Target cuda = Target::parse("cuda -arch=sm_90 -max_shared_memory_per_block=49152");
  EXPECT_EQ(cuda.kind, Target::Kind::CUDA);
  EXPECT_TRUE(cuda.is_gpu());
  EXPECT_EQ(cuda.arch, "sm_90");
  EXPECT_EQ(cuda.max_shared_memory_per_block, 49152);
  Target cl = Target::parse("opencl -device=1 -max_threads_per_block=256");
  EXPECT_EQ(cl.kind, Target::Kind::OpenCL);
  EXPECT_EQ(cl.device, 1);
  EXPECT_EQ(cl.max_threads_per_block, 256);
  EXPECT_FALSE(Target::parse("llvm").is_gpu());
  for (const char* text : {"cuda", "cuda -arch=sm_80", "opencl", "opencl -device=1 -max_threads_per_block=256",
                           "cuda -arch=sm_90a -max_threads_per_block=512 -max_shared_memory_per_block=65536"}) {
    EXPECT_EQ(Target::parse(text).to_string(), text);
  }
}

}  // namespace
}  // namespace temper
