// The worker: the process that loads the untrusted solution and runs it on inputs it regenerates
// from seeds. It never sees expected outputs; it returns output bytes and input fingerprints,
// and the parent judges them (DESIGN.md, principle 2).
#pragma once

#include <filesystem>
#include <string>

namespace kb {

struct WorkerArgs {
  std::string target;
  std::filesystem::path problem_dir;
  std::filesystem::path library;
  size_t shape = 0;
};

// Serves requests on kWorkerRequestFd / kWorkerReplyFd until "teardown" or end of stream.
// Returns the process exit code.
int worker_main(const WorkerArgs& args);

}  // namespace kb
