#include "store/run_dir.h"

#include <algorithm>
#include <cctype>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/json_text.h"
#include "core/atomic_file.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string iso_utc(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string path_component(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
    if (keep) out += c;
    else if (out.empty() || out.back() != '-') out += '-';
  }
  // Leading dots would make a hidden folder, and "." or ".." a path trick.
  while (!out.empty() && (out.front() == '.' || out.front() == '-')) out.erase(0, 1);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "none" : out;
}

std::string run_dir_name(const RunKey& k, std::chrono::system_clock::time_point t) {
  return utc_timestamp(t) + "_" + path_component(k.agent) + "_" + path_component(k.model) + "_" + path_component(k.problem) +
         "_" + std::to_string(k.trial);
}

RunDir RunDir::create(const fs::path& runs_root, const RunKey& key, std::chrono::system_clock::time_point t) {
  return create_named(runs_root, run_dir_name(key, t));
}

RunDir RunDir::create_named(const fs::path& runs_root, const std::string& name) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '_';
  });
  if (name.empty() || !plain || name.front() == '.')
    throw std::runtime_error("run directory name '" + name + "': use letters, digits, '.', '+', '-' and '_' only, not first '.'");
  fs::create_directories(runs_root);
  const fs::path dir = fs::absolute(runs_root / name).lexically_normal();
  // mkdir, not create_directories: it fails on an existing folder, which is the point.
  if (mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST)
      throw std::runtime_error("run directory " + dir.string() +
                               " already exists (same agent, model, problem and trial started in the same second): "
                               "give another --trial");
    throw std::runtime_error("cannot create run directory " + dir.string() + ": " + std::strerror(errno));
  }
  return RunDir(dir);
}

void RunDir::write_record(const json& record) const { write_json("run.json", record); }

void RunDir::write_json(std::string_view name, const json& j) const {
  write_file_atomically(path_ / name, json_text(j) + "\n");
}

json RunDir::read_record() const {
  std::ifstream in(record_file());
  if (!in) throw std::runtime_error("cannot read " + record_file().string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(record_file().string() + ": not valid JSON: " + e.what());
  }
}

namespace {

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. With the pid
// it names one process; a recycled pid has another start time.
std::string start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(s.substr(close + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
  }
  return f;
}

}  // namespace

json process_identity() {
  return {{"hostname", hostname()}, {"pid", static_cast<int64_t>(getpid())}, {"pid_start", start_time(getpid())}};
}

std::string effective_status(const json& record) {
  const std::string status = record.value("status", "");
  if (status != run_status::running) return status;
  const json p = record.value("process", json::object());
  if (!p.is_object() || p.value("hostname", "") != hostname()) return status;  // cannot tell from here
  const auto pid = static_cast<pid_t>(p.value("pid", int64_t{0}));
  if (pid <= 0) return status;
  if (start_time(pid) != p.value("pid_start", std::string("?"))) return run_status::incomplete;
  return status;
}

// --- IncompleteOnSignal ---------------------------------------------------------------------------

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
// The handler reads these; update() publishes a new record by swapping the pointer. Old records
// are deliberately never freed: a handler on another thread may still be reading one, and a run
// updates its record only a handful of times.
std::atomic<const std::string*> g_record{nullptr};
std::string* g_final = nullptr;
std::string* g_tmp = nullptr;
struct sigaction g_old[std::size(kSignals)];

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void on_signal(int sig) {
  // open/write/fsync/close/rename/signal/raise are all async-signal-safe.
  if (const std::string* rec = g_record.load(); rec && g_final && g_tmp) {
    int fd = open(g_tmp->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_all(fd, rec->data(), rec->size());
      fsync(fd);
      close(fd);
      rename(g_tmp->c_str(), g_final->c_str());
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when the handler returns: kbench ends as the signal intended
}

}  // namespace

IncompleteOnSignal::IncompleteOnSignal(const RunDir& run, const json& record) {
  g_final = new std::string(run.record_file().string());
  g_tmp = new std::string(run.record_file().string() + ".tmp.signal");
  update(record);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &sa, &g_old[i]);
}

IncompleteOnSignal::~IncompleteOnSignal() {
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &g_old[i], nullptr);
  g_record.store(nullptr);
}

void IncompleteOnSignal::update(const json& record) {
  g_record.store(new std::string(json_text(record) + "\n"));
}

}  // namespace kb
