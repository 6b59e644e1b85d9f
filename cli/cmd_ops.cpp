#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/workload.h"

namespace temper::cli {

int cmd_ops(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    throw UserError(str("temper ops takes at most one op name, got ", args.size(), " arguments (", join(args, " "),
                        "): `temper ops` lists every op, `temper ops OP` shows one"));
  }
  if (!args.empty() && args[0] != "--help" && args[0] != "-h") {
    std::cout << ops::op_doc(args[0]) << "\n  " << ops::op_usage(args[0]) << "\n";
    return 0;
  }
  std::cout << "Operators (a workload is op:key=value,...; keys not given take the defaults shown):\n\n";
  for (const std::string& name : ops::known_ops()) {
    std::cout << "  " << std::left << std::setw(18) << name << ops::op_doc(name) << "\n"
              << "  " << std::setw(18) << "" << ops::op_usage(name) << "\n";
  }
  return 0;
}

}  // namespace temper::cli
