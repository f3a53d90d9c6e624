// The parent's handle on one worker process: spawn, request/reply with deadlines, and a clear
// account of how it died when it does.
#pragma once

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <sys/types.h>

#include "eval/worker_limits.h"
#include "protocol/channel.h"
#include "protocol/messages.h"
#include "protocol/worker_args.h"

namespace kb {

// The worker did not answer properly. kind: "crash" (it died), "timeout" (no reply in time, it
// was killed), "error" (it reported an error, e.g. the library failed to load), "sandbox" (killed
// by SIGSYS: a system call its filter forbids), "forged" (a reply without a valid HMAC, or a
// malformed frame, once the channel key was handed over; it was killed), "log_limit" (stopped by
// SIGXFSZ at the log limit), "out_of_memory" (an allocation failed at the memory limit:
// eval/worker_limits.h).
class WorkerFailure : public std::runtime_error {
 public:
  WorkerFailure(std::string kind, const std::string& message) : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

// The last `max_lines` lines of a worker's log file, each indented, for failure messages; empty when
// the file is missing or empty.
std::string worker_log_tail(const std::filesystem::path& log, size_t max_lines = 20);

class WorkerProcess {
 public:
  // Starts `<this executable> __worker ...` with the solution's stdout/stderr going to `log`; with
  // `isolate`, inside the worker's namespace sandbox (eval/worker_sandbox.h). Either way the
  // worker dies with this process (a parent-death signal), however this process ends.
  // Waits for the worker's "ready"; throws WorkerFailure when it does not come. `limits`: the
  // worker's resource caps (eval/worker_limits.h), set before it starts.
  WorkerProcess(const WorkerArgs& args, const std::filesystem::path& log, std::chrono::milliseconds ready_timeout,
                bool isolate = false, const WorkerLimits& limits = {});
  // Starts the worker as above but returns at once: its start-up (CUDA context, the solution's
  // library loaded) runs on while the caller works; wait_ready() waits for the "ready" then. The
  // evaluator starts the next shape's worker this way while the current shape is checked.
  struct StartOnly {};
  WorkerProcess(StartOnly, const WorkerArgs& args, const std::filesystem::path& log,
                std::chrono::milliseconds ready_timeout, bool isolate = false, const WorkerLimits& limits = {});
  // Waits for the worker's "ready" (at most the ready timeout from this call on; at once when it
  // came before); throws WorkerFailure when it does not come, every later call too.
  void wait_ready();
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends a request (protocol/messages.h) and waits for its reply, whose header the caller reads
  // as the request's reply type. Throws WorkerFailure on crash, timeout or an error reply.
  template <class Request>
  Message request(const Request& req, std::chrono::milliseconds timeout) {
    return request_json(nlohmann::json(req), timeout);
  }
  // From now on every reply must carry a valid HMAC under `key` (protocol.h); the caller hands the
  // key to the worker in its next request.
  void set_channel_key(const std::array<unsigned char, 32>& key) {
    auth_.key = key;
    auth_.sequence = 0;
    auth_.active = true;
  }
  // Replies with a larger payload are refused before it is read (a forged length must not make
  // the parent allocate without bound).
  void set_max_payload(uint64_t bytes) { max_payload_ = bytes; }
  // Asks the worker to tear down and exit; kills it if it does not within the timeout.
  void finish(std::chrono::milliseconds timeout);

  // Whether the worker's log has reached the log limit (a solution that ignores SIGXFSZ goes on
  // running with its writes refused).
  bool log_full() const;
  const WorkerLimits& limits() const { return limits_; }

  // The process kbench started (bwrap, when isolated; the worker is then a descendant of it).
  pid_t pid() const { return pid_; }

  // The last lines of the worker's log (what the solution printed), for failure messages.
  std::string log_tail(size_t max_lines = 20) const;

 private:
  Message request_json(const nlohmann::json& req, std::chrono::milliseconds timeout);
  [[noreturn]] void died(const std::string& during);
  std::string out_of_memory_message(const std::string& what) const;
  void kill_now();

  pid_t pid_ = -1;
  std::chrono::milliseconds ready_timeout_{0};
  bool ready_ = false;
  int to_worker_ = -1, from_worker_ = -1;
  std::filesystem::path log_;
  bool isolated_ = false;
  WorkerLimits limits_;
  ChannelAuth auth_;
  uint64_t max_payload_ = 64ull << 30;
};

}  // namespace kb
