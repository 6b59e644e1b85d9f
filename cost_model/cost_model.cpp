#include "cost_model/cost_model.h"

#include "compiler/ir/error.h"
#include "cost_model/features.h"
#include "cost_model/random_model.h"
#include "cost_model/xgb_model.h"

namespace temper::cost_model {

ModelOptions resolve_model_options(const ModelOptions& options) {
  ModelOptions resolved = options;
  if (options.objective != "rank" && options.objective != "reg") {
    throw UserError(
        str("unknown cost model objective '", options.objective, "': use rank (pairwise ranking) or reg (regression)"));
  }
  if (options.num_features < 0) {
    throw UserError(
        str("cost model num_features must be 0 (the candidate features) or more, not ", options.num_features));
  }
  if (options.rounds < 1) throw UserError(str("cost model rounds must be at least 1, not ", options.rounds));
  if (options.max_depth < 1) throw UserError(str("cost model max_depth must be at least 1, not ", options.max_depth));
  if (!(options.learning_rate > 0)) {
    throw UserError(str("cost model learning_rate must be positive, not ", options.learning_rate));
  }
  if (options.threads < 0) throw UserError(str("cost model threads must be 0 (all) or more, not ", options.threads));
  if (resolved.num_features == 0) resolved.num_features = static_cast<int>(feature_names().size());
  return resolved;
}

std::unique_ptr<CostModel> make_cost_model(const std::string& kind, const ModelOptions& options) {
  if (kind == "xgb") return std::make_unique<XGBModel>(resolve_model_options(options));
  if (kind == "random") return std::make_unique<RandomModel>(resolve_model_options(options));
  throw UserError(str("unknown cost model '", kind, "': use xgb or random"));
}

}  // namespace temper::cost_model
