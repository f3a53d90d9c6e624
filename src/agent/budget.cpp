#include "agent/budget.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "agent/process_tree.h"
#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

volatile sig_atomic_t g_interrupt = 0;

void on_interrupt(int sig) { g_interrupt = sig; }

constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Installs the interrupt handlers for the life of the object and restores the previous ones.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    g_interrupt = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kInterruptSignals); ++i) sigaction(kInterruptSignals[i], &sa, &old_[i]);
  }
  ~InterruptHandlers() {
    for (size_t i = 0; i < std::size(kInterruptSignals); ++i) sigaction(kInterruptSignals[i], &old_[i], nullptr);
  }

 private:
  struct sigaction old_[std::size(kInterruptSignals)];
};

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);  // an interrupting signal just shortens the nap
}

int open_or_throw(const fs::path& p, int flags, const char* what) {
  int fd = open(p.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(std::string("cannot open ") + what + " " + p.string() + ": " + std::strerror(errno));
  return fd;
}

// Owns the running command: its pid, the children this process had before (left alone), and the
// command's exit status once reaped.
class Supervisor {
 public:
  Supervisor(pid_t child, std::set<pid_t> before, bool sandboxed, BudgetOutcome& out)
      : child_(child), before_(std::move(before)), sandboxed_(sandboxed), out_(out) {}

  bool child_done() const { return child_done_; }

  // Reaps the command if it has ended; records its status.
  bool poll_child() {
    if (child_done_) return true;
    int status = 0;
    pid_t r = waitpid(child_, &status, WNOHANG);
    if (r < 0 && errno == ECHILD) {  // cannot happen (only this object reaps it); never spin on it
      child_done_ = true;
      return true;
    }
    if (r == child_) {
      child_done_ = true;
      if (WIFEXITED(status)) out_.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) out_.signal = WTERMSIG(status);
    }
    return child_done_;
  }

  std::vector<ProcessNode> alive() {
    std::vector<ProcessNode> all = descendants(getpid(), before_), live, others;
    for (const auto& n : all)
      if (n.pid != child_) others.push_back(n);
    reap(others);  // orphans re-parented to us, now zombies; the command is reaped by poll_child
    poll_child();
    for (const auto& n : all)
      if (!n.zombie && !(n.pid == child_ && child_done_)) live.push_back(n);
    return live;
  }

  // SIGTERM to the agent's processes, up to `grace` for them to go, then SIGKILL until none is left.
  void terminate(milliseconds grace) {
    for (const auto& n : alive()) {
      if (sandboxed_ && n.depth <= 2) continue;
      if (kill(n.pid, SIGTERM) == 0) ++out_.terminated;
    }
    const auto deadline = Clock::now() + grace;
    while (Clock::now() < deadline && !alive().empty()) sleep_ms(20);
    kill_all();
  }

  // SIGKILL, repeated: a process may fork between our scan and our kill, and its children only
  // appear in the next scan. A SIGKILLed process cannot fork again, so this converges.
  void kill_all() {
    std::set<pid_t> counted;
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      auto live = alive();
      if (live.empty()) break;
      if (Clock::now() > give_up) {
        out_.survivors = static_cast<int>(live.size());
        break;
      }
      for (const auto& n : live)
        if (kill(n.pid, SIGKILL) == 0 && counted.insert(n.pid).second) ++out_.killed;
      sleep_ms(10);
    }
    // The command itself, if it was among them.
    while (!child_done_) {
      if (!poll_child()) sleep_ms(5);
    }
  }

 private:
  pid_t child_;
  std::set<pid_t> before_;
  bool sandboxed_;
  BudgetOutcome& out_;
  bool child_done_ = false;
};

}  // namespace

BudgetOutcome run_with_budget(const BudgetedCommand& c) {
  if (c.argv.empty()) throw std::invalid_argument("run_with_budget: empty command");
  if (c.stdout_file.empty() || c.stderr_file.empty()) throw std::invalid_argument("run_with_budget: stdout/stderr files required");
  BudgetOutcome out;

  const int out_fd = open_or_throw(c.stdout_file, O_WRONLY | O_CREAT | O_APPEND, "transcript file");
  const int err_fd = open_or_throw(c.stderr_file, O_WRONLY | O_CREAT | O_APPEND, "transcript file");
  const int in_fd = open_or_throw(c.stdin_file.empty() ? fs::path("/dev/null") : c.stdin_file, O_RDONLY, "stdin file");
  SpawnOptions o;
  o.argv = c.argv;
  o.env = &c.env;
  o.cwd = c.cwd;
  o.stdin_fd = in_fd;
  o.stdout_fd = out_fd;
  o.stderr_fd = err_fd;
  // Own process group: a Ctrl-C on kbench's terminal reaches kbench, which ends the agent in
  // order, rather than the agent directly. PDEATHSIG: if kbench dies, so does the command (and
  // with bubblewrap's --die-with-parent, the whole sandbox). The signals kbench handles while the
  // command runs are the command's to take as usual.
  o.new_process_group = true;
  o.death_signal = SIGKILL;
  o.default_signals.assign(std::begin(kInterruptSignals), std::end(kInterruptSignals));
  o.default_signals.push_back(SIGPIPE);
  o.exec_error = "kbench: cannot run the agent command ";

  std::set<pid_t> before = children(getpid());
  SubreaperScope subreaper;
  InterruptHandlers handlers;
  const auto start = Clock::now();
  pid_t pid;
  try {
    pid = spawn(o);
  } catch (...) {
    close(out_fd), close(err_fd), close(in_fd);
    throw;
  }
  close(out_fd);
  close(err_fd);
  close(in_fd);

  Supervisor sup(pid, before, c.sandboxed, out);
  auto last_tick = start;
  for (;;) {
    if (sup.poll_child()) break;
    const auto now = Clock::now();
    if (g_interrupt) {
      out.interrupted = true;
      out.interrupt_signal = g_interrupt;
      break;
    }
    if (now - start >= c.budget) {
      out.killed_at_budget = true;
      break;
    }
    if (c.tick && now - last_tick >= std::chrono::seconds(1)) {
      last_tick = now;
      c.tick(std::chrono::duration_cast<milliseconds>(now - start));
    }
    sleep_ms(20);
  }
  if (!sup.child_done()) {
    sup.terminate(c.grace);
  } else {
    // The agent exited by itself; whatever it left running in the background goes now.
    const auto left = sup.alive();
    out.strays = static_cast<int>(left.size());
    if (!left.empty()) sup.terminate(c.grace);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

milliseconds parse_duration(std::string_view text) {
  const std::string s(text);
  auto bad = [&]() {
    return std::invalid_argument("duration '" + s + "': expected a positive duration such as 45m, 90s, 1h30m, 2.5s or 500ms");
  };
  if (s.empty()) throw bad();
  double total_ms = 0;
  size_t i = 0;
  bool any = false;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    if (j == i) throw bad();
    double v = 0;
    try {
      size_t used = 0;
      v = std::stod(s.substr(i, j - i), &used);
      if (used != j - i) throw bad();
    } catch (const std::logic_error&) {
      throw bad();
    }
    size_t k = j;
    while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
    const std::string unit = s.substr(j, k - j);
    double scale = 0;
    if (unit == "h") scale = 3600e3;
    else if (unit == "m" || unit == "min") scale = 60e3;
    else if (unit == "s") scale = 1e3;
    else if (unit == "ms") scale = 1;
    else if (unit.empty() && !any && k == s.size()) scale = 1e3;  // a bare number: seconds
    else throw bad();
    total_ms += v * scale;
    any = true;
    i = k;
  }
  if (!(total_ms >= 1) || !std::isfinite(total_ms)) throw bad();
  // A week is far beyond any agent budget; anything larger is a typo (and would overflow the clock).
  if (total_ms > 7 * 24 * 3600e3) throw std::invalid_argument("duration '" + s + "': at most 7 days (168h)");
  return milliseconds(static_cast<int64_t>(std::llround(total_ms)));
}

std::string describe_duration(milliseconds d) {
  const int64_t ms = d.count();
  auto part = [](int64_t n, const char* unit) { return std::to_string(n) + " " + unit + (n == 1 ? "" : "s"); };
  if (ms % 1000 != 0) return std::to_string(ms) + " ms";
  const int64_t s = ms / 1000, h = s / 3600, m = (s % 3600) / 60, sec = s % 60;
  std::string out;
  auto add = [&](const std::string& p) { out += (out.empty() ? "" : " ") + p; };
  if (h) add(part(h, "hour"));
  if (m) add(part(m, "minute"));
  if (sec || out.empty()) add(part(sec, "second"));
  return out;
}

}  // namespace kb
