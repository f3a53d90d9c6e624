// `kbench __worker`: the hidden subcommand the evaluator starts to host a solution.
#include "cli/app.h"
#include "worker/worker.h"

namespace kb::cli {

void register_worker_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<WorkerArgs>();
  auto* cmd = app.add_subcommand("__worker", "internal: hosts a solution for the evaluator");
  cmd->group("");  // hidden from --help
  cmd->add_option("--target", args->target)->required();
  cmd->add_option("--problem-dir", args->problem_dir)->required();
  cmd->add_option("--library", args->library)->required();
  cmd->add_option("--shape", args->shape)->required();
  cmd->add_option("--jit-cache", args->jit_cache);
  cmd->callback([args, &exit_code] { exit_code = worker_main(*args); });
}

}  // namespace kb::cli
