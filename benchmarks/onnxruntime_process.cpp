#include "benchmarks/onnxruntime_process.h"

#include <csignal>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/runtime/npy.h"

namespace temper::bench {

OnnxruntimeProcess::OnnxruntimeProcess(const std::string& python, const std::string& runner, const std::string& model,
                                       int threads, const std::map<std::string, NDArray>& inputs,
                                       const std::string& work_dir)
    : work_dir_(work_dir) {
  // A runner that dies mid-run closes its pipe: the next request should fail with the
  // runner's words ("exited without a reply"), not end this process by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args = {python, runner, model, std::to_string(threads)};
  int index = 0;
  for (const auto& [name, array] : inputs) {
    std::string path = str(work_dir, "/input_", index++, ".npy");
    write_npy(path, array);
    args.push_back(name + "=" + path);
  }
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw UserError("onnxruntime: cannot make a pipe");
  pid_ = fork();
  if (pid_ < 0) throw UserError("onnxruntime: cannot fork");
  if (pid_ == 0) {
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    close(to_child[1]);
    close(from_child[0]);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::printf("error: cannot run %s\n", args[0].c_str());
    std::fflush(stdout);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  to_ = fdopen(to_child[1], "w");
  from_ = fdopen(from_child[0], "r");
  std::string ready = read_line();
  if (ready.rfind("ready onnxruntime ", 0) != 0) throw UserError(str("onnxruntime on ", model, ": ", ready));
  version_ = ready.substr(18);
}

OnnxruntimeProcess::~OnnxruntimeProcess() {
  if (to_) {
    std::fputs("quit\n", to_);
    std::fclose(to_);
  }
  if (from_) std::fclose(from_);
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

std::string OnnxruntimeProcess::read_line() {
  std::string line;
  int c;
  while ((c = std::fgetc(from_)) != EOF && c != '\n') line.push_back(static_cast<char>(c));
  if (line.empty() && c == EOF) return "error: the runner exited without a reply";
  return line;
}

std::string OnnxruntimeProcess::request(const std::string& line) {
  std::fputs((line + "\n").c_str(), to_);
  std::fflush(to_);
  return read_line();
}

double OnnxruntimeProcess::time_round(double min_round_ms) {
  std::string reply = request(str("round ", min_round_ms));
  if (reply.rfind("seconds ", 0) != 0) throw UserError("onnxruntime: " + reply);
  return std::atof(reply.c_str() + 8);
}

NDArray OnnxruntimeProcess::output() {
  std::string path = work_dir_ + "/onnxruntime_output.npy";
  std::string reply = request("output " + path);
  if (reply != "saved") throw UserError("onnxruntime: " + reply);
  return read_npy(path);
}

}  // namespace temper::bench
