// record_does_not_replay: a record `db import` or `merge` adds must stand for a schedule of
// its workload that still replays and lowers; failed records and ops of other Temper
// versions pass as they are.
#include <gtest/gtest.h>

#include "compiler/ops/workload.h"
#include "compiler/target/target.h"
#include "schedule_space/template.h"
#include "search/record_replay_check.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/merge.h"

namespace temper::search {
namespace {

using tuning_db::TuningRecord;

const char* kWorkload = "matmul:M=64,N=64,K=64";

// A record of the template's default config, as a tuning job writes it.
TuningRecord measured_record() {
  ops::Workload workload = ops::Workload::parse(kWorkload);
  Target target = Target::parse("llvm");
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
  schedule_space::Config config = task->default_config();
  TuningRecord r;
  r.workload = {"matmul", workload.to_string()};
  r.target.target = target.to_string();
  r.target.cores = 2;
  r.config = config.to_json();
  r.trace = task->apply(config).trace().to_json();
  r.costs = {1e-3, 1e-3};
  r.mean = 1e-3;
  r.timestamp = 1700000000;
  return r;
}

TEST(RecordReplayCheck, AMeasuredRecordReplays) {
  EXPECT_EQ(record_does_not_replay(measured_record()), "");
}

TEST(RecordReplayCheck, AConfigOutsideTheSpaceOrATraceThatDoesNotReplayIsNamed) {
  TuningRecord bad_config = measured_record();
  bad_config.config = {{"no_such_knob", 3}};
  std::string why = record_does_not_replay(bad_config);
  std::string canonical = ops::Workload::parse(kWorkload).to_string();
  EXPECT_NE(why.find("its config does not give a schedule of " + canonical + " for llvm that lowers"),
            std::string::npos)
      << why;

  // A trace (no config) whose blocks the op does not have.
  TuningRecord bad_trace = measured_record();
  bad_trace.config = nullptr;
  bool renamed = false;
  for (nlohmann::json& instruction : bad_trace.trace["instructions"]) {
    if (instruction["kind"] == "GetBlock") {
      instruction["attrs"][0] = "no_such_block";
      renamed = true;
    }
  }
  ASSERT_TRUE(renamed) << bad_trace.trace.dump();
  why = record_does_not_replay(bad_trace);
  EXPECT_NE(why.find("its trace does not give a schedule of " + canonical), std::string::npos) << why;

  TuningRecord bad_target = measured_record();
  bad_target.target.target = "llvm -frobnicate";
  EXPECT_NE(record_does_not_replay(bad_target).find("its target 'llvm -frobnicate' is not a target"), std::string::npos);
}

TEST(RecordReplayCheck, FailedRecordsAndUnknownOpsAreNotChecked) {
  TuningRecord failed = measured_record();
  failed.config = {{"no_such_knob", 3}};
  failed.error = tuning_db::ErrorKind::CompileError;
  failed.costs.clear();
  failed.mean = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(record_does_not_replay(failed), "");
  TuningRecord unknown = measured_record();
  unknown.workload = {"oldop", "oldop:x=1"};
  EXPECT_EQ(record_does_not_replay(unknown), "");
}

TEST(RecordReplayCheck, AddNewRecordsRefusesWhatItNamesAndCountsIt) {
  TuningRecord good = measured_record();
  TuningRecord bad = measured_record();
  bad.config = {{"no_such_knob", 3}};
  bad.timestamp += 1;
  tuning_db::MemoryDatabase db;
  tuning_db::MergeResult result = tuning_db::add_new_records(db, {good, bad}, record_does_not_replay);
  EXPECT_EQ(result.added, 1);
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].rfind("record 2: its config does not give a schedule", 0), 0u) << result.refused[0];
  // Already present: skipped before any check.
  result = tuning_db::add_new_records(db, {good}, [](const TuningRecord&) { return std::string("never asked"); });
  EXPECT_EQ(result.skipped, 1);
  EXPECT_TRUE(result.refused.empty());
}

}  // namespace
}  // namespace temper::search
