// temper-compile-worker: a compile worker of the builder (compile_pool.h). It reads one
// request per line on stdin and writes one reply per line (worker_protocol.h,
// CompileRequest), until stdin ends: it rebuilds the candidate from its workload and
// recipe (search/candidate_recipe.h), checks that the rebuilt PrimFuncs are the builder's
// (structural_hash), and lowers and compiles them into the request's path. A compile
// that fails is a reply; one that crashes or exits this process, or outlives its time-out,
// the builder sees to. Each compile's CPU time is capped at the request's time-out plus a
// second (RLIMIT_CPU, raised from this process's use so far), a backstop should the
// builder be stopped rather than dead.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "compiler/ir/error.h"
#include "compiler/ir/structural_equal.h"
#include "measure/compile_process.h"
#include "measure/worker_protocol.h"
#include "search/candidate_recipe.h"

namespace temper::measure {
namespace {

// Caps the CPU time this process may use from now on at about seconds: the soft limit
// (SIGXCPU) past its use so far. The hard limit stays as it is, since a process may not
// raise it again, and the next compile raises the soft one.
void cap_cpu_time_from_now(double seconds) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  rlimit cpu{};
  getrlimit(RLIMIT_CPU, &cpu);
  rlim_t used = static_cast<rlim_t>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1;
  rlim_t soft = used + static_cast<rlim_t>(std::ceil(seconds)) + 1;
  cpu.rlim_cur = cpu.rlim_max == RLIM_INFINITY ? soft : std::min(soft, cpu.rlim_max);
  setrlimit(RLIMIT_CPU, &cpu);
}

CompileReply handle(const CompileRequest& request) {
  CompileReply reply;
  reply.id = request.id;
  MeasureInput input{ops::Workload::parse(request.workload), Target::parse(request.target), PrimFunc(), {}, -1, ""};
  try {
    search::RebuiltCandidate rebuilt = search::rebuild_candidate(input.workload, input.target, request.recipe);
    input.func = rebuilt.func;
    input.pack = rebuilt.pack;
    input.packed_input = rebuilt.packed_input;
  } catch (const std::exception&) {
    return reply;  // not rebuilt: the builder compiles its own PrimFunc
  }
  if (structural_hash(input.func) != request.func_hash ||
      (input.pack ? structural_hash(*input.pack) : 0) != request.pack_hash) {
    return reply;
  }
  reply.rebuilt = true;
  cap_cpu_time_from_now(request.timeout_s);
  BuildArtifact artifact = compile_in_this_process(input, request.path);
  reply.error = artifact.error;
  reply.message = artifact.message;
  reply.compile_seconds = artifact.compile_seconds;
  return reply;
}

}  // namespace
}  // namespace temper::measure

int main() {
  rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // Ctrl-C reaches the whole process group: the tuning job stops after its batch, and the
  // compiles it waits for finish rather than end as compile errors. stdin's end ends this.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  // Replies go to a private copy of stdout; fd 1 becomes stderr, so that nothing a
  // compiler prints can break a reply.
  int reply_fd = dup(STDOUT_FILENO);
  FILE* replies = reply_fd >= 0 ? fdopen(reply_fd, "w") : nullptr;
  if (!replies || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("temper-compile-worker: cannot set up its output");
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string answer;
    try {
      answer =
          temper::measure::encode_compile_reply(temper::measure::handle(temper::measure::decode_compile_request(line)));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "temper-compile-worker: %s\n", e.what());
      return 2;  // a request it cannot read: the builder sees the end of its output
    }
    std::fprintf(replies, "%s\n", answer.c_str());
    std::fflush(replies);
  }
  return 0;
}
