// The temper subcommands. Each takes the arguments after its name and returns the
// process exit status; errors are thrown (main.cpp turns them into messages and a
// non-zero exit).
#pragma once

#include <string>
#include <vector>

namespace temper::cli {

int cmd_show(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_ops(const std::vector<std::string>& args);
int cmd_db(const std::vector<std::string>& args);
int cmd_tune(const std::vector<std::string>& args);
int cmd_model(const std::vector<std::string>& args);
int cmd_build(const std::vector<std::string>& args);
int cmd_devices(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);

}  // namespace temper::cli
