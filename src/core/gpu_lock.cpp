#include "core/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

GpuLock::GpuLock(const fs::path& file, fs::path log, std::string what) : log_(std::move(log)), what_(std::move(what)) {
  fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("GPU lock " + file.string() + ": " + std::strerror(errno));
  const double t0 = now_s();
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int e = errno;
      ::close(fd_);
      throw std::runtime_error("GPU lock " + file.string() + ": " + std::strerror(e));
    }
  }
  t_held_ = now_s();
  wait_ = t_held_ - t0;
}

GpuLock::~GpuLock() {
  const double hold = now_s() - t_held_;
  flock(fd_, LOCK_UN);
  ::close(fd_);
  if (log_.empty()) return;
  std::ofstream out(log_, std::ios::app);
  out << json{{"what", what_}, {"wait_seconds", wait_}, {"hold_seconds", hold}}.dump() << "\n";
}

std::unique_ptr<GpuLock> gpu_lock_from_environment(const std::string& what) {
  const char* file = std::getenv(kGpuLockEnv);
  if (!file || !*file) return nullptr;
  const char* log = std::getenv(kGpuLockLogEnv);
  return std::make_unique<GpuLock>(file, log ? fs::path(log) : fs::path(), what);
}

json summarize_gpu_lock_log(const fs::path& log) {
  std::ifstream in(log);
  if (!in) return nullptr;
  int uses = 0;
  double wait = 0, hold = 0;
  for (std::string line; std::getline(in, line);) {
    const json r = json::parse(line, nullptr, false);
    if (!r.is_object()) continue;
    ++uses;
    wait += r.value("wait_seconds", 0.0);
    hold += r.value("hold_seconds", 0.0);
  }
  return {{"uses", uses}, {"wait_seconds", wait}, {"hold_seconds", hold}};
}

}  // namespace kb
