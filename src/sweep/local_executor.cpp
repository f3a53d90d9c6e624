#include "sweep/local_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "core/subprocess.h"

extern char** environ;

namespace kb {
namespace fs = std::filesystem;

std::vector<std::string> visible_gpus(const std::vector<int>& requested) {
  std::vector<std::string> out;
  if (!requested.empty()) {
    for (int g : requested) out.push_back(std::to_string(g));
    return out;
  }
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v) {
    std::string s = v;
    for (size_t p = 0; p <= s.size();) {
      const size_t q = std::min(s.find(',', p), s.size());
      if (q > p) out.push_back(s.substr(p, q - p));
      p = q + 1;
    }
    return out;
  }
  std::vector<int> ids;
  const std::regex node("nvidia([0-9]+)");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev", ec)) {
    std::smatch m;
    const std::string n = e.path().filename().string();
    if (std::regex_match(n, m, node)) ids.push_back(std::stoi(m[1]));
  }
  std::sort(ids.begin(), ids.end());
  for (int i : ids) out.push_back(std::to_string(i));
  return out;
}

LocalExecutor::LocalExecutor(LocalSlots slots) : slots_(std::move(slots)) {
  used_.assign(slots_.gpus.empty() ? 1 : slots_.gpus.size(), 0);
}

LocalExecutor::~LocalExecutor() {
  // Children left (an exception unwound the sweep): stopped, so that none outlives it.
  stop_all();
  for (auto& [pid, c] : children_) waitpid(pid, nullptr, 0);
}

std::string LocalExecutor::slot_name(size_t slot) const {
  return slots_.gpus.empty() ? std::string("host") : "gpu " + slots_.gpus[slot];
}

int LocalExecutor::free_slots() const {
  if (slots_.gpus.empty()) return std::max(0, std::max(1, slots_.host_concurrency) - used_[0]);
  int n = 0;
  for (int u : used_) n += std::max(0, slots_.per_gpu - u);
  return n;
}

std::string LocalExecutor::describe() const {
  if (slots_.gpus.empty()) return fmt::format("host, {} at a time", std::max(1, slots_.host_concurrency));
  std::string ids;
  for (const auto& g : slots_.gpus) ids += (ids.empty() ? "" : ",") + g;
  return fmt::format("{} GPU{} ({}) x {} agent{}", slots_.gpus.size(), slots_.gpus.size() == 1 ? "" : "s", ids, slots_.per_gpu,
                     slots_.per_gpu == 1 ? "" : "s");
}

std::string LocalExecutor::start(const CellLaunch& l) {
  // The least used slot (cells spread over the GPUs before any GPU takes a second).
  size_t slot = 0;
  for (size_t i = 1; i < used_.size(); ++i)
    if (used_[i] < used_[slot]) slot = i;
  const int cap = slots_.gpus.empty() ? std::max(1, slots_.host_concurrency) : slots_.per_gpu;
  if (used_[slot] >= cap) throw std::runtime_error("local executor: no free slot");

  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.emplace_back(*e);
  if (!slots_.gpus.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + slots_.gpus[slot]);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = l.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  fs::create_directories(l.log.parent_path());
  const int log = ::open(l.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", l.log.string(), std::strerror(errno)));
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(log);
    ::close(devnull);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);  // the sweep forwards signals itself; a terminal's Ctrl-C reaches the sweep only
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the sweep died between fork and prctl
    dup2(devnull, 0);
    dup2(log, 1);
    dup2(log, 2);
    execve(argv[0], argv.data(), envp.data());
    const char msg[] = "kbench sweep: cannot execute the kbench binary\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  ::close(log);
  ::close(devnull);
  ++used_[slot];
  children_[pid] = Child{l.cell, slot, l.log};
  return slot_name(slot);
}

std::vector<CellExit> LocalExecutor::poll() {
  std::vector<CellExit> out;
  for (auto it = children_.begin(); it != children_.end();) {
    int status = 0;
    const pid_t r = waitpid(it->first, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) {
      ++it;
      continue;
    }
    CellExit x;
    x.cell = it->second.cell;
    x.slot = slot_name(it->second.slot);
    // kbench run's exit codes: 0 pass, 1 fail (results); anything else is worth a note (the last
    // lines of its console output say why).
    const int code = r > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != 0 && code != 1) {
      std::ifstream in(it->second.log);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
      while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
      x.note = (r > 0 ? describe_exit(status) : std::string("lost")) + (text.empty() ? "" : ": " + text);
    }
    --used_[it->second.slot];
    out.push_back(std::move(x));
    it = children_.erase(it);
  }
  return out;
}

void LocalExecutor::stop_all() {
  for (const auto& [pid, c] : children_) kill(pid, SIGTERM);
}

}  // namespace kb
