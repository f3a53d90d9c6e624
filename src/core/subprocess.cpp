#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kb {

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$*?;&|<>()") == std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "unknown wait status " + std::to_string(status);
}

pid_t spawn(const SpawnOptions& o) {
  if (o.argv.empty()) throw std::invalid_argument("spawn: empty argv");
  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<char*> args, envp;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (o.env) {
    for (const auto& e : *o.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  const std::string cwd = o.cwd.string();
  std::vector<int> moved(o.fds.size(), -1);  // allocated here: the child must not allocate
  const int devnull = o.stdin_fd < 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    if (devnull >= 0) close(devnull);
    throw std::runtime_error(std::string("fork: ") + strerror(err));
  }
  if (pid > 0) {
    if (devnull >= 0) close(devnull);
    return pid;
  }
  // The child.
  if (o.new_process_group) setpgid(0, 0);
  if (o.death_signal) {
    // Nothing kbench starts outlives it; the check closes the race with a parent that died first.
    prctl(PR_SET_PDEATHSIG, o.death_signal);
    if (getppid() != parent) _exit(126);
  }
  if (!o.default_signals.empty()) {
    for (int sig : o.default_signals) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  // Handed-over descriptors first moved out of the way (one may sit where another goes, and dup2
  // onto itself would keep O_CLOEXEC), then into place, where dup2 clears O_CLOEXEC.
  for (size_t i = 0; i < o.fds.size(); ++i)
    if ((moved[i] = fcntl(o.fds[i].first, F_DUPFD_CLOEXEC, 10)) < 0) _exit(126);
  const int in = o.stdin_fd >= 0 ? o.stdin_fd : devnull;
  if (in < 0 || dup2(in, STDIN_FILENO) < 0) _exit(126);
  if (o.stdout_fd >= 0 && dup2(o.stdout_fd, STDOUT_FILENO) < 0) _exit(126);
  if (o.stderr_fd >= 0 && dup2(o.stderr_fd, STDERR_FILENO) < 0) _exit(126);
  for (size_t i = 0; i < o.fds.size(); ++i)
    if (dup2(moved[i], o.fds[i].second) < 0) _exit(126);
  if (o.in_child && !o.in_child(o.in_child_context)) _exit(125);
  if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
    const char msg[] = "kbench: cannot enter the working directory\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  if (o.search_path) {
    if (o.env) execvpe(args[0], args.data(), envp.data());
    else execvp(args[0], args.data());
  } else {
    if (o.env) execve(args[0], args.data(), envp.data());
    else execv(args[0], args.data());
  }
  const char* err = strerror(errno);
  (void)!write(STDERR_FILENO, o.exec_error.data(), o.exec_error.size());
  (void)!write(STDERR_FILENO, args[0], strlen(args[0]));
  (void)!write(STDERR_FILENO, ": ", 2);
  (void)!write(STDERR_FILENO, err, strlen(err));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(127);
}

std::optional<int> reap(pid_t pid, bool wait) {
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r != pid) return std::nullopt;
  return status;
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd, const std::vector<std::string>* env) {
  if (argv.empty()) throw std::invalid_argument("run_command: empty argv");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  const auto start = std::chrono::steady_clock::now();
  SpawnOptions o;
  o.argv = argv;
  o.env = env;
  o.cwd = cwd;
  o.stdout_fd = o.stderr_fd = fds[1];
  pid_t pid;
  try {
    pid = spawn(o);  // its own process group: a timeout kills the whole tree (compiler drivers fork)
  } catch (...) {
    close(fds[0]);
    close(fds[1]);
    throw;
  }
  close(fds[1]);
  CommandResult r;
  const auto deadline = start + timeout;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    r.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  const int status = reap(pid).value_or(0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace kb
