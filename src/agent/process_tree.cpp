#include "agent/process_tree.h"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace kb {

namespace {

// ppid of every live process, from the 4th field of /proc/<pid>/stat. The command name (field 2)
// is in parentheses and may itself hold spaces and ')', so the fields after it are read from the
// last ')'.
struct Link {
  pid_t pid;
  bool zombie;
};

std::multimap<pid_t, Link> parent_links() {
  std::multimap<pid_t, Link> by_parent;
  DIR* d = opendir("/proc");
  if (!d) return by_parent;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (!end || *end != '\0' || pid <= 0) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE* f = std::fopen(path, "re");
    if (!f) continue;  // it exited meanwhile
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close = std::strrchr(buf, ')');
    if (!close) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(close + 1, " %c %ld", &state, &ppid) != 2) continue;
    by_parent.emplace(static_cast<pid_t>(ppid), Link{static_cast<pid_t>(pid), state == 'Z'});
  }
  closedir(d);
  return by_parent;
}

}  // namespace

std::set<pid_t> children(pid_t root) {
  std::set<pid_t> out;
  const auto links = parent_links();
  auto [b, e] = links.equal_range(root);
  for (auto it = b; it != e; ++it) out.insert(it->second.pid);
  return out;
}

std::vector<ProcessNode> descendants(pid_t root, const std::set<pid_t>& exclude) {
  const auto links = parent_links();
  std::vector<ProcessNode> out;
  std::vector<ProcessNode> frontier{{root, 0}};
  while (!frontier.empty()) {
    std::vector<ProcessNode> next;
    for (const auto& n : frontier) {
      auto [b, e] = links.equal_range(n.pid);
      for (auto it = b; it != e; ++it) {
        if (exclude.count(it->second.pid)) continue;
        ProcessNode c{it->second.pid, n.depth + 1, it->second.zombie};
        out.push_back(c);
        next.push_back(c);
      }
    }
    frontier = std::move(next);
  }
  return out;
}

void reap(const std::vector<ProcessNode>& pids) {
  for (const auto& n : pids) {
    int status = 0;
    // ECHILD for pids that are not our children: nothing to do.
    while (waitpid(n.pid, &status, WNOHANG) < 0 && errno == EINTR) {
    }
  }
}

SubreaperScope::SubreaperScope() {
  prctl(PR_GET_CHILD_SUBREAPER, &previous_, 0, 0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

SubreaperScope::~SubreaperScope() { prctl(PR_SET_CHILD_SUBREAPER, previous_, 0, 0, 0); }

}  // namespace kb
