// The processes below this one, found from /proc, so a budget can end every process an agent
// started: a process group is not enough, because a child can leave it with setsid() (and a
// daemon double-forks). While a SubreaperScope lives, orphans of our descendants are re-parented
// to this process instead of to init (prctl PR_SET_CHILD_SUBREAPER), so they stay in the tree.
#pragma once

#include <sys/types.h>

#include <set>
#include <vector>

namespace kb {

struct ProcessNode {
  pid_t pid = 0;
  int depth = 0;        // 1 for a child of the root, 2 for a grandchild, ...
  bool zombie = false;  // exited, waiting to be reaped by its parent: harmless, cannot be killed
};

// Descendants of `root` at this instant, parents before children. Subtrees rooted at a pid in
// `exclude` are left out (children the caller had before starting the agent).
std::vector<ProcessNode> descendants(pid_t root, const std::set<pid_t>& exclude = {});

// The current children of `root`.
std::set<pid_t> children(pid_t root);

// Collects exit statuses of our own children among `pids` that have ended (zombies), so they do
// not linger; other pids are ignored.
void reap(const std::vector<ProcessNode>& pids);

class SubreaperScope {
 public:
  SubreaperScope();   // marks this process as a child subreaper (restored on destruction)
  ~SubreaperScope();
  SubreaperScope(const SubreaperScope&) = delete;
  SubreaperScope& operator=(const SubreaperScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace kb
