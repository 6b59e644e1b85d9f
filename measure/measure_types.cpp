#include "measure/measure_types.h"

#include "compiler/ir/error.h"

namespace temper::measure {

const char* error_name(MeasureError error) {
  switch (error) {
    case MeasureError::None:
      return "None";
    case MeasureError::CompileError:
      return "CompileError";
    case MeasureError::CompileTimeout:
      return "CompileTimeout";
    case MeasureError::RuntimeError:
      return "RuntimeError";
    case MeasureError::RunTimeout:
      return "RunTimeout";
    case MeasureError::WrongResult:
      return "WrongResult";
    case MeasureError::InstantiationError:
      return "InstantiationError";
  }
  TEMPER_CHECK(false, "unknown MeasureError ", static_cast<int>(error));
}

}  // namespace temper::measure
