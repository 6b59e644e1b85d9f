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
            "unknown target kind 'cuda2' in target 'cuda2 -arch=sm_90': expected 'llvm' or 'c'");
  EXPECT_EQ(parse_error("llvm -mcpu=native -opt-level=3"),
            "unknown option '-opt-level' in target 'llvm -mcpu=native -opt-level=3': the options are -mcpu=<cpu>, "
            "-mattr=<+feature,-feature>, -num-cores=<n>");
  EXPECT_EQ(parse_error(""), "empty target string: use e.g. 'llvm -mcpu=native' or 'c'");
  EXPECT_EQ(parse_error("llvm -mattr=avx2"),
            "bad feature 'avx2' in -mattr of target 'llvm -mattr=avx2': write +feature to add one, -feature to remove "
            "one");
  EXPECT_EQ(parse_error("llvm -num-cores=two"),
            "-num-cores in target 'llvm -num-cores=two' must be a positive "
            "integer, got 'two'");
  EXPECT_EQ(parse_error("llvm -mcpu"), "option -mcpu in target 'llvm -mcpu' needs a value: -mcpu=...");
  EXPECT_EQ(parse_error("llvm -mcpu=a -mcpu=b"), "option -mcpu is given twice in target 'llvm -mcpu=a -mcpu=b'");
}

}  // namespace
}  // namespace temper
