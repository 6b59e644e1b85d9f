#include "compiler/runtime/runtime_symbols.h"

#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/ukernels.h"

namespace temper {

std::vector<std::pair<std::string, void*>> runtime_symbols() {
  std::vector<std::pair<std::string, void*>> symbols = {
#define TEMPER_SYMBOL(fn) {#fn, reinterpret_cast<void*>(&fn)}
      TEMPER_SYMBOL(temper_set_last_error),
      TEMPER_SYMBOL(temper_get_last_error),
      TEMPER_SYMBOL(temper_parallel_for),
      TEMPER_SYMBOL(temper_set_num_threads),
      TEMPER_SYMBOL(temper_get_num_threads),
      TEMPER_SYMBOL(temper_alloc),
      TEMPER_SYMBOL(temper_free),
      TEMPER_SYMBOL(temper_check_num_args),
      TEMPER_SYMBOL(temper_check_tensor_header),
      TEMPER_SYMBOL(temper_check_tensor_shape),
#undef TEMPER_SYMBOL
  };
  for (auto& symbol : ukernel_symbols()) symbols.push_back(symbol);
  return symbols;
}

}  // namespace temper
