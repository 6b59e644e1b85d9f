// Machine probes in the tuning log (tuning_db/machine_probe.h): kept in SQLite beside the
// records, the newest of a machine found among several machines', and carried by a merge
// without being repeated.
#include <gtest/gtest.h>

#include "tuning_db/memory_database.h"
#include "tuning_db/merge.h"
#include "tuning_db/sqlite_database.h"
#include "tuning_db_test_util.h"

namespace temper::tuning_db {
namespace {

using log_testing::TempDirTest;

const TargetInfo kZen{"llvm -mcpu=native", "AMD EPYC 9R14", "fpu avx2 fma avx512f", 2, "LLVM 19.1.7", ""};
const TargetInfo kXeon{"llvm -mcpu=native", "Intel Xeon Platinum 8488C", "fpu avx2 fma avx512f amx_tile", 4,
                       "LLVM 19.1.7", ""};

MachineProbe probe_of(const TargetInfo& machine, double fp32, int64_t timestamp) {
  MachineProbe p;
  p.machine = machine;
  p.threads = machine.cores;
  p.fp32_gflops = fp32;
  p.int8_gops = 4 * fp32;
  p.bandwidth_gbs = 30.5;
  p.timestamp = timestamp;
  p.temper_version = "0.1.0";
  return p;
}

class MachineProbeLog : public TempDirTest {
 protected:
  MachineProbeLog() : TempDirTest("temper_probe_log") {}
};

TEST_F(MachineProbeLog, ProbesRoundTripThroughTheFileInCommitOrder) {
  std::vector<MachineProbe> written = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 90),
                                       probe_of(kZen, 240.0, 200)};
  {
    SQLiteDatabase db(file("t.db"));
    for (const MachineProbe& p : written) db.commit_probe(p);
  }
  SQLiteDatabase db(file("t.db"), OpenMode::ReadOnly);
  EXPECT_EQ(db.probes(), written);
  EXPECT_EQ(db.size(), 0);  // a probe is no record
}

TEST(MachineProbe, TheNewestProbeOfTheSameKindOfMachineIsTaken) {
  std::vector<MachineProbe> probes = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 300),
                                      probe_of(kZen, 240.0, 200)};
  TargetInfo zen_other_target = kZen;
  zen_other_target.target = "llvm -mcpu=znver4";  // same machine, another target string
  zen_other_target.cores = 8;
  const MachineProbe* zen = latest_probe_of(probes, zen_other_target);
  ASSERT_NE(zen, nullptr);
  EXPECT_EQ(zen->fp32_gflops, 240.0);
  ASSERT_NE(latest_probe_of(probes, kXeon), nullptr);
  EXPECT_EQ(latest_probe_of(probes, kXeon)->fp32_gflops, 512.5);
  TargetInfo gpu = kZen;
  gpu.device = "NVIDIA H200 | 13.0 | sm_90";  // a CPU probe says nothing about a GPU
  EXPECT_EQ(latest_probe_of(probes, gpu), nullptr);
}

TEST(MachineProbe, MergingAddsTheProbesALogLacksOnce) {
  MemoryDatabase into;
  into.commit_probe(probe_of(kZen, 234.0, 100));
  std::vector<MachineProbe> other = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 90)};
  EXPECT_EQ(add_new_probes(into, other), 1);
  EXPECT_EQ(add_new_probes(into, other), 0);
  ASSERT_EQ(into.probes().size(), 2u);
  EXPECT_EQ(into.probes()[1].machine, kXeon);
}

}  // namespace
}  // namespace temper::tuning_db
