// temper devices: which target kinds this machine can run, on which devices, and for each
// kind it cannot run, why and what to install. Always exits 0: a machine without a GPU is
// an answer, not an error.
#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/codegen/llvm/host_cpu.h"
#include "compiler/ir/error.h"
#include "compiler/runtime/gpu/gpu_device.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

// One device a target kind runs on, as the target string that picks it.
struct DeviceLine {
  std::string target;
  std::string description;
  nlohmann::json details;
};

struct KindReport {
  std::string kind;
  std::vector<DeviceLine> devices;  // empty: the kind cannot run here
  std::string reason;               // why not, and what to install
};

// "256 KiB", "141 GiB": sizes as a person reads them.
std::string human_bytes(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::ostringstream text;
  text << std::setprecision(value < 10 && unit > 0 ? 2 : 3) << value << " " << units[unit];
  return text.str();
}

// The path of `cc` on PATH (what the C backend runs), or "".
std::string find_c_compiler() {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    std::string candidate = (folder.empty() ? "." : folder) + "/cc";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

KindReport llvm_report() {
  unsigned cores = std::thread::hardware_concurrency();
  KindReport report{"llvm", {}, ""};
  report.devices.push_back({"llvm -mcpu=native",
                            str("host CPU ", host_cpu_name(), ", ", cores, " cores"),
                            {{"cpu", host_cpu_name()}, {"cores", cores}}});
  return report;
}

KindReport c_report() {
  KindReport report{"c", {}, ""};
  std::string compiler = find_c_compiler();
  if (compiler.empty()) {
    report.reason = "no C compiler: `cc` is not on PATH; install gcc or clang";
  } else {
    report.devices.push_back({"c", str("host CPU, compiled by ", compiler), {{"compiler", compiler}}});
  }
  return report;
}

nlohmann::json info_json(const GpuDeviceInfo& info) {
  return {{"name", info.name},
          {"vendor", info.vendor},
          {"driver", info.driver},
          {"version", info.version},
          {"compute_units", info.compute_units},
          {"max_threads_per_block", info.max_threads_per_block},
          {"max_block_dims", info.max_block_dims},
          {"max_shared_memory_per_block", info.max_shared_memory_per_block},
          {"global_memory_bytes", info.global_memory_bytes},
          {"fingerprint", info.fingerprint()}};
}

KindReport gpu_report(const GpuAvailability& availability) {
  KindReport report{target_kind_name(availability.kind), {}, availability.reason};
  if (availability.kind == Target::Kind::CUDA && availability.devices.empty()) {
    // Without a device, CUDA code still compiles: say whether it can.
    std::string why_not;
    report.reason += nvrtc_available(&why_not)
                         ? "; NVRTC is here, so CUDA kernels still compile to PTX (temper show ... --target cuda "
                           "--emit ptx)"
                         : "; nor can CUDA code compile: " + why_not;
  }
  for (size_t i = 0; i < availability.devices.size(); ++i) {
    const GpuDeviceInfo& info = availability.devices[i];
    std::string description =
        availability.kind == Target::Kind::CUDA
            ? str(info.name, " (", info.version, ", ", info.driver, "), ", info.compute_units, " SMs, ",
                  human_bytes(info.global_memory_bytes))
            : str(info.name, " (", info.version, "), ", info.compute_units, " compute units, max work-group ",
                  info.max_threads_per_block, ", local memory ", human_bytes(info.max_shared_memory_per_block));
    std::string target = availability.kind == Target::Kind::CUDA ? str("cuda -arch=", info.version, " -device=", i)
                                                                 : str("opencl -device=", i);
    report.devices.push_back({target, description, info_json(info)});
  }
  return report;
}

void print_text(const std::vector<KindReport>& reports) {
  size_t width = 0;
  for (const KindReport& report : reports) {
    for (const DeviceLine& device : report.devices) width = std::max(width, device.target.size());
  }
  std::cout << "Targets this machine can run:\n";
  for (const KindReport& report : reports) {
    for (const DeviceLine& device : report.devices) {
      std::cout << "  " << std::left << std::setw(8) << report.kind << std::setw(width + 2) << device.target
                << device.description << "\n";
    }
  }
  bool any_missing = false;
  for (const KindReport& report : reports) any_missing |= report.devices.empty();
  if (!any_missing) return;
  std::cout << "\nTargets it cannot run:\n";
  for (const KindReport& report : reports) {
    if (report.devices.empty()) std::cout << "  " << std::left << std::setw(8) << report.kind << report.reason << "\n";
  }
}

void print_json(const std::vector<KindReport>& reports) {
  nlohmann::json kinds = nlohmann::json::array();
  for (const KindReport& report : reports) {
    nlohmann::json kind = {{"kind", report.kind}, {"available", !report.devices.empty()}};
    if (report.devices.empty()) {
      kind["reason"] = report.reason;
    } else {
      kind["devices"] = nlohmann::json::array();
      for (const DeviceLine& device : report.devices) {
        nlohmann::json entry = device.details;
        entry["target"] = device.target;
        kind["devices"].push_back(entry);
      }
    }
    kinds.push_back(kind);
  }
  std::cout << nlohmann::json{{"targets", kinds}}.dump(2) << "\n";
}

}  // namespace

int cmd_devices(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper devices [--json]";
  bool as_json = false;
  po::options_description desc("temper devices: the targets this machine can run, and why not the others");
  desc.add_options()("json", po::bool_switch(&as_json), "print JSON instead of text");
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "nothing", 0, 0, positionals, vm)) return 0;

  std::vector<KindReport> reports = {llvm_report(), c_report()};
  for (const GpuAvailability& availability : probe_gpu_targets()) reports.push_back(gpu_report(availability));
  if (as_json) {
    print_json(reports);
  } else {
    print_text(reports);
  }
  return 0;
}

}  // namespace temper::cli
