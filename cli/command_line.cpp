#include "cli/command_line.h"

#include <iostream>

#include "compiler/ir/error.h"

namespace po = boost::program_options;

namespace temper::cli {

bool parse_command_line(const std::vector<std::string>& args, const std::string& usage, po::options_description& desc,
                        const std::string& positional_name, int min_positionals, int max_positionals,
                        std::vector<std::string>& positionals, po::variables_map& vm) {
  desc.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(desc).add_options()("positional", po::value(&positionals));
  po::positional_options_description positional;
  positional.add("positional", -1);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UserError(str(e.what(), "\n", usage, " (see --help)"));
  }
  int count = static_cast<int>(positionals.size());
  if (count < min_positionals || (max_positionals >= 0 && count > max_positionals)) {
    std::string what =
        count < min_positionals ? "missing " + positional_name : "unexpected argument '" + positionals.back() + "'";
    throw UserError(str(what, "\n", usage, " (see --help)"));
  }
  return true;
}

bool parse_command_line(const std::vector<std::string>& args, const std::string& usage, po::options_description& desc,
                        std::string& workload) {
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "WORKLOAD", 1, 1, positionals, vm)) return false;
  workload = positionals[0];
  return true;
}

std::pair<std::string, std::string> split_binding(const std::string& text, const std::string& flag,
                                                  const std::string& form) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UserError(str(flag, " '", text, "' is not ", form));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::map<std::string, int64_t> parse_dim_flags(const std::vector<std::string>& flags) {
  std::map<std::string, int64_t> dims;
  for (const std::string& flag : flags) {
    auto [name, size_text] = split_binding(flag, "--dim", "NAME=N");
    size_t end = 0;
    int64_t size = 0;
    try {
      size = std::stoll(size_text, &end);
    } catch (const std::exception&) {
      end = 0;
    }
    if (end != size_text.size() || size < 1) {
      throw UserError(str("--dim ", flag, ": '", size_text, "' is not a positive size"));
    }
    dims[name] = size;
  }
  return dims;
}

}  // namespace temper::cli
