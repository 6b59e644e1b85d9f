#include "compiler/codegen/llvm/host_cpu.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <vector>

namespace temper {

std::string host_cpu_name() {
  return llvm::sys::getHostCPUName().str();
}

std::string host_cpu_features() {
  std::vector<std::string> features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    features.push_back((feature.second ? "+" : "-") + feature.first().str());
  }
  std::sort(features.begin(), features.end(),
            [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); });
  std::string joined;
  for (const std::string& f : features) joined += (joined.empty() ? "" : ",") + f;
  return joined;
}

bool host_has_feature(const std::string& feature) {
  auto features = llvm::sys::getHostCPUFeatures();
  auto it = features.find(feature);
  return it != features.end() && it->second;
}

}  // namespace temper
