#include "eval/run_delay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace kb {
namespace {

namespace fs = std::filesystem;

// A process's parent from /proc/<pid>/stat; -1 when unreadable. The command name (field 2) is in
// parentheses and may hold spaces or parentheses itself: the fields after it start after the last ')'.
pid_t parent_of(const fs::path& stat) {
  std::ifstream in(stat);
  std::string line;
  if (!std::getline(in, line)) return -1;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  long ppid = -1;
  rest >> state >> ppid;
  return rest ? static_cast<pid_t>(ppid) : -1;
}

std::vector<pid_t> tree_of(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const pid_t ppid = parent_of(e.path() / "stat");
    if (ppid > 0) children[ppid].push_back(pid);
  }
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i)
    for (pid_t c : children[tree[i]]) tree.push_back(c);
  return tree;
}

}  // namespace

RunDelays thread_run_delays(pid_t root) {
  RunDelays delays;
  if (root <= 0) return delays;
  for (pid_t pid : tree_of(root)) {
    std::error_code ec;
    for (const auto& t : fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec)) {
      std::ifstream in(t.path() / "schedstat");
      uint64_t on_cpu = 0, waiting = 0;
      if (in >> on_cpu >> waiting) delays[static_cast<pid_t>(std::stol(t.path().filename().string()))] = waiting;
    }
  }
  return delays;
}

pid_t worker_main_thread(pid_t root) {
  if (root <= 0) return -1;
  // tree_of lists the tree breadth first: its last process is one of the deepest.
  return tree_of(root).back();
}

double run_delay_growth(const RunDelays& before, const RunDelays& after, pid_t tid) {
  auto b = before.find(tid), a = after.find(tid);
  if (b == before.end() || a == after.end() || a->second < b->second) return 0;
  return static_cast<double>(a->second - b->second) * 1e-9;
}

double largest_run_delay_growth(const RunDelays& before, const RunDelays& after, pid_t except) {
  double largest = 0;
  for (const auto& [tid, _] : after)
    if (tid != except) largest = std::max(largest, run_delay_growth(before, after, tid));
  return largest;
}

}  // namespace kb
