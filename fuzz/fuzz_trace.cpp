// Schedule traces as the log and `--trace FILE` hold them: JSON read, the trace checked
// (Trace::from_json) and replayed on a small matmul, whose every step must either apply or
// be refused with a ScheduleError.
#include <nlohmann/json.hpp>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/trace.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const temper::ops::OpInstance op =
      temper::ops::instantiate(temper::ops::Workload::parse("matmul:M=16,N=16,K=16"));
  nlohmann::json json = nlohmann::json::parse(temper::fuzz::as_string(data, size), nullptr, false);
  if (json.is_discarded()) return 0;
  temper::fuzz::refusal_is_fine([&] { temper::Trace::from_json(json).replay(op.func); });
  return 0;
}
