#include "eval/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <vector>

#include "core/bwrap.h"
#include "core/self_executable.h"
#include "core/subprocess.h"
#include "eval/worker_sandbox.h"

namespace kb {
namespace fs = std::filesystem;

WorkerProcess::WorkerProcess(const WorkerArgs& a, const fs::path& log, std::chrono::milliseconds ready_timeout,
                             bool isolate, const WorkerLimits& limits)
    : WorkerProcess(StartOnly{}, a, log, ready_timeout, isolate, limits) {
  wait_ready();
}

WorkerProcess::WorkerProcess(StartOnly, const WorkerArgs& a, const fs::path& log, std::chrono::milliseconds ready_timeout,
                             bool isolate, const WorkerLimits& limits)
    : ready_timeout_(ready_timeout), log_(log), isolated_(isolate), limits_(limits) {
  // A worker that dies mid-write must not kill the parent with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  int req[2], rep[2];
  if (pipe2(req, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  widen_pipe(rep[1]);  // the replies carry the outputs: up to gigabytes (protocol/channel.h)
  const std::string exe = self_executable().string();
  WorkerArgs inside = a;
  BwrapLayout layout;
  if (isolate) layout = worker_sandbox_layout(a, &inside);
  std::vector<std::string> argv = {exe, "__worker", "--target", inside.target, "--problem-dir", inside.problem_dir.string(),
                                   "--library", inside.library.string(), "--shape", std::to_string(inside.shape)};
  if (!inside.jit_cache.empty()) argv.insert(argv.end(), {"--jit-cache", inside.jit_cache.string()});
  std::vector<std::string> env;
  if (isolate) {
    argv = bwrap_command(layout, argv);
    const fs::path bwrap = find_program("bwrap");
    if (bwrap.empty()) throw WorkerFailure("error", "bwrap (bubblewrap) is not on PATH; the worker's sandbox needs it");
    argv[0] = bwrap.string();
    const char* path = std::getenv("PATH");
    env.push_back(std::string("PATH=") + (path ? path : "/usr/bin:/bin"));
  }
  // The solution's stdout and stderr go to the log; the channel's ends onto the fds the worker
  // looks for (protocol/channel.h); every other descriptor closes at exec.
  const int logfd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logfd < 0) {
    const int err = errno;
    for (int fd : {req[0], req[1], rep[0], rep[1]}) close(fd);
    throw std::runtime_error("cannot write the worker's log " + log.string() + ": " + strerror(err));
  }
  SpawnOptions o;
  o.argv = argv;
  o.search_path = false;
  // bwrap itself starts with PATH alone: kbench's environment (keys) stays in this process.
  if (isolate) o.env = &env;
  o.stdout_fd = o.stderr_fd = logfd;
  o.fds = {{req[0], kWorkerRequestFd}, {rep[1], kWorkerReplyFd}};
  // Dies with kbench, however kbench ends (Ctrl-C, SIGTERM, SIGKILL): the signal is kept across
  // exec, and bwrap passes it on to everything in the sandbox (--die-with-parent and its PID
  // namespace). Its own group: a timeout kills whatever the solution may have forked.
  o.death_signal = SIGKILL;
  o.new_process_group = true;
  // The caps hold from exec on, for bwrap and the worker alike (soft and hard: the solution cannot
  // raise them). The log is the worker's only file, so RLIMIT_FSIZE caps it alone.
  o.in_child = [](const void* l) { return apply_worker_limits(*static_cast<const WorkerLimits*>(l)); };
  o.in_child_context = &limits_;
  try {
    pid_ = spawn(o);
  } catch (...) {
    close(logfd);
    for (int fd : {req[0], req[1], rep[0], rep[1]}) close(fd);
    throw;
  }
  close(logfd);
  close(req[0]);
  close(rep[1]);
  to_worker_ = req[1];
  from_worker_ = rep[0];
}

void WorkerProcess::wait_ready() {
  if (ready_) return;
  // A worker that failed its start was reaped (pid_ -1): a later call fails as the first did.
  if (pid_ <= 0) throw WorkerFailure("crash", "the worker is gone: its start failed");
  Message ready;
  try {
    ready = receive_message(from_worker_, ready_timeout_);
  } catch (const ChannelTimeout&) {
    kill_now();
    throw WorkerFailure("timeout", "the worker did not start within " + std::to_string(ready_timeout_.count() / 1000) + " s");
  } catch (const ChannelClosed&) {
    died("start-up");
  }
  // Before the key is handed over anyone in the worker's process may write this frame (a
  // solution's static constructor): a malformed one is not trusted, only refused.
  ReadyReply r;
  try {
    r = ready.header.get<ReadyReply>();
  } catch (const ProtocolError&) {
    r = ReadyReply{false, "the worker's start-up reply is malformed", false};
  }
  if (!r.ready) {
    kill_now();
    if (r.out_of_memory) throw WorkerFailure("out_of_memory", out_of_memory_message(r.error));
    throw WorkerFailure("error", r.error);
  }
  ready_ = true;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) kill_now();
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
}

void WorkerProcess::kill_now() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  reap(pid_);
  pid_ = -1;
}

void WorkerProcess::died(const std::string& during) {
  const std::optional<int> status = reap(pid_);
  const int st = status.value_or(0);
  const bool r = status.has_value();  // reaped, with a status
  pid_ = -1;
  // bwrap reports a command killed by signal N as exit code 128 + N.
  int signal_no = r && WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  if (isolated_ && r && WIFEXITED(st) && WEXITSTATUS(st) > 128) signal_no = WEXITSTATUS(st) - 128;
  std::string how = !r         ? "unknown status"
                    : signal_no ? "signal " + std::to_string(signal_no) + " (" + strsignal(signal_no) + ")"
                                : describe_exit(st);
  std::string tail = log_tail();
  if (signal_no == SIGXFSZ || (limits_.log_bytes > 0 && log_full()))
    throw WorkerFailure("log_limit", "the solution wrote more than the log limit of " + byte_size_text(limits_.log_bytes) +
                                         " to its stdout/stderr during " + during +
                                         " and was stopped there (--log-limit raises it)" +
                                         (tail.empty() ? "" : "; its last output:\n" + tail));
  // An allocation that failed at the limit in a place that cannot throw (a thread, a noexcept
  // function) ends in std::terminate, which names the exception in the log.
  if (limits_.memory_bytes > 0 && tail.find("std::bad_alloc") != std::string::npos)
    throw WorkerFailure("out_of_memory", out_of_memory_message("the worker died during " + during + " (" + how +
                                                                   "); its last output:\n" + tail));
  if (signal_no == SIGSYS)
    throw WorkerFailure("sandbox", "the worker was killed by its system-call filter (SIGSYS) during " + during +
                                       ": the solution tried to start a process or program, trace or read another "
                                       "process, signal another process, or make memory executable after setup, "
                                       "none of which a kernel needs (docs/threat-model.md)" +
                                       (tail.empty() ? "" : "; its last output:\n" + tail));
  if (isolated_ && r && WIFEXITED(st) && WEXITSTATUS(st) == 1 && tail.find("bwrap: ") != std::string::npos)
    throw WorkerFailure("error", "the worker's sandbox could not be made (bwrap): " + tail);
  throw WorkerFailure("crash", "the worker died during " + during + " (" + how + ")" +
                                   (tail.empty() ? "" : "; its last output:\n" + tail));
}

Message WorkerProcess::request_json(const nlohmann::json& req, std::chrono::milliseconds timeout) {
  const std::string op = req.value("op", std::string("?"));
  if (pid_ <= 0) throw WorkerFailure("crash", "the worker is no longer running");
  try {
    send_message(to_worker_, req);
    Message m;
    try {
      m = receive_message(from_worker_, timeout, &auth_, max_payload_);
    } catch (const ChannelForged& e) {
      kill_now();
      throw WorkerFailure("forged", std::string(e.what()) + " (reply to '" + op + "'); the worker was killed");
    }
    if (m.header.is_object() && m.header.contains("error")) {
      ErrorReply e;
      try {
        e = m.header.get<ErrorReply>();
      } catch (const ProtocolError&) {
        e.error = m.header["error"].dump();
      }
      if (e.out_of_memory) throw WorkerFailure("out_of_memory", out_of_memory_message(e.error));
      throw WorkerFailure("error", e.error);
    }
    return m;
  } catch (const ChannelTimeout&) {
    kill_now();
    throw WorkerFailure("timeout", "no reply to '" + op + "' within " + std::to_string(timeout.count() / 1000.0) +
                                       " s; the worker was killed (a hang, a deadlock or a far too slow solution)");
  } catch (const ChannelClosed&) {
    died("'" + op + "'");
  } catch (const WorkerFailure&) {
    throw;
  } catch (const std::runtime_error& e) {
    // A malformed frame: with the key handed over, only a solution writing on the channel makes one.
    kill_now();
    if (auth_.active) throw WorkerFailure("forged", std::string(e.what()) + " (reply to '" + op + "'); the worker was killed");
    throw;
  }
}

void WorkerProcess::finish(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return;
  try {
    request(TeardownRequest{}, timeout);
  } catch (const WorkerFailure&) {
    return;  // already reaped or killed
  }
  // Give it a moment to exit on its own, then make sure.
  for (int i = 0; i < 100; ++i) {
    if (reap(pid_, /*wait=*/false)) {
      pid_ = -1;
      return;
    }
    usleep(10000);
  }
  kill_now();
}

bool WorkerProcess::log_full() const {
  std::error_code ec;
  const auto size = fs::file_size(log_, ec);
  return !ec && limits_.log_bytes > 0 && size >= limits_.log_bytes;
}

std::string WorkerProcess::out_of_memory_message(const std::string& what) const {
  const std::string limit = limits_.memory_bytes > 0 ? "the worker's memory limit of " + byte_size_text(limits_.memory_bytes)
                                                     : "the machine's memory";
  return "an allocation failed at " + limit + " (" + what +
         "): the solution's buffers and kbench's own for this shape did not fit (--memory-limit raises it)";
}

std::string WorkerProcess::log_tail(size_t max_lines) const { return worker_log_tail(log_, max_lines); }

std::string worker_log_tail(const std::filesystem::path& log, size_t max_lines) {
  std::ifstream in(log);
  std::deque<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
    if (lines.size() > max_lines) lines.pop_front();
  }
  std::string s;
  for (const auto& l : lines) s += "    " + l + "\n";
  return s;
}

}  // namespace kb
