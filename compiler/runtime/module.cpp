#include "compiler/runtime/module.h"

#include "compiler/ir/error.h"

namespace temper {

std::string function_symbol(const std::string& name) {
  return "temper_fn_" + name;
}

PackedFunc::PackedFunc(std::string name, TemperPackedCFunc fn, std::shared_ptr<const void> owner)
    : name_(std::move(name)), owner_(std::move(owner)) {
  if (fn) fn_ = fn;
}

PackedFunc::PackedFunc(std::string name, Body body) : name_(std::move(name)), fn_(std::move(body)) {}

void PackedFunc::operator()(std::span<const TemperTensor> args) const {
  TEMPER_CHECK(fn_, "call through an undefined PackedFunc");
  if (fn_(args.data(), static_cast<int32_t>(args.size())) != 0) throw UserError(temper_get_last_error());
}

void PackedFunc::operator()(const std::vector<NDArray*>& args) const {
  std::vector<TemperTensor> tensors;
  tensors.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i] || !args[i]->defined()) throw UserError(str(name_, ": argument ", i, " is an undefined NDArray"));
    tensors.push_back(args[i]->tensor());
  }
  (*this)(std::span<const TemperTensor>(tensors));
}

}  // namespace temper
