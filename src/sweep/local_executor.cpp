#include "sweep/local_executor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
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
  for (auto& [pid, c] : children_) reap(pid);
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

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.emplace_back(*e);
  if (!slots_.gpus.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + slots_.gpus[slot]);
  std::vector<std::string> args = l.argv;
  if (!slots_.gpus.empty() && slots_.per_gpu > 1) {
    // Agents share this GPU: its lock keeps their checks, benchmarks and evaluations apart.
    const fs::path lock = slots_.lock_dir / ("gpu-" + slots_.gpus[slot] + ".lock");
    fs::create_directories(slots_.lock_dir);
    if (!fs::exists(lock)) std::ofstream(lock).flush();
    args.insert(args.end(), {"--gpu-lock", lock.string()});
  }
  fs::create_directories(l.log.parent_path());
  const int log = ::open(l.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", l.log.string(), std::strerror(errno)));
  SpawnOptions o;
  o.argv = std::move(args);
  o.env = &env;
  o.search_path = false;
  o.stdout_fd = o.stderr_fd = log;
  o.new_process_group = true;  // the sweep forwards signals itself; a terminal's Ctrl-C reaches the sweep only
  o.death_signal = SIGTERM;
  o.exec_error = "kbench sweep: cannot execute the kbench binary ";
  pid_t pid;
  try {
    pid = spawn(o);
  } catch (...) {
    ::close(log);
    throw;
  }
  ::close(log);
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
