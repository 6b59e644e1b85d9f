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

namespace {

// A positive size from text, or UserError naming the flag.
int64_t positive_size(const std::string& text, const std::string& flag) {
  size_t end = 0;
  int64_t size = 0;
  try {
    size = std::stoll(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (text.empty() || end != text.size() || size < 1) {
    throw UserError(str(flag, ": '", text, "' is not a positive size"));
  }
  return size;
}

}  // namespace

void ModelShapeFlags::add_options(po::options_description& desc) {
  desc.add_options()("dim", po::value(&dims)->composing(),
                     "NAME=N: the size of the model's dynamic dimension NAME (repeatable)")(
      "shape", po::value(&shapes)->composing(),
      "NAME=D0xD1x...: the whole shape of the model's input NAME, static dimensions too, e.g. x=8x3x224x224 for a "
      "batch of 8 from a model exported at batch 1 (repeatable)");
}

std::map<std::string, int64_t> ModelShapeFlags::dim_sizes() const {
  std::map<std::string, int64_t> sizes;
  for (const std::string& flag : dims) {
    auto [name, size_text] = split_binding(flag, "--dim", "NAME=N");
    sizes[name] = positive_size(size_text, "--dim " + flag);
  }
  return sizes;
}

std::map<std::string, std::vector<int64_t>> ModelShapeFlags::input_shapes() const {
  std::map<std::string, std::vector<int64_t>> result;
  for (const std::string& flag : shapes) {
    auto [name, text] = split_binding(flag, "--shape", "NAME=D0xD1x...");
    std::vector<int64_t> shape;
    size_t start = 0;
    while (true) {
      size_t x = text.find('x', start);
      shape.push_back(
          positive_size(text.substr(start, x == std::string::npos ? std::string::npos : x - start), "--shape " + flag));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (!result.emplace(name, shape).second) throw UserError(str("--shape gives '", name, "' twice"));
  }
  return result;
}

}  // namespace temper::cli
