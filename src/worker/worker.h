// The worker: the process that loads the untrusted solution and runs it on inputs it regenerates
// from seeds. It never sees expected outputs; it returns output bytes and input fingerprints,
// and the parent judges them (DESIGN.md, principle 2). Everything under src/worker/ runs in this
// process, beside the solution; it includes nothing of the parent's evaluator (src/eval/), and
// what it shares with the parent is in src/protocol/.
#pragma once

#include "protocol/worker_args.h"

namespace kb {

// Serves requests on kWorkerRequestFd / kWorkerReplyFd until "teardown" or end of stream.
// Returns the process exit code.
int worker_main(const WorkerArgs& args);

}  // namespace kb
