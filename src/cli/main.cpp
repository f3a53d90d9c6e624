// kbench: a GPU-kernel benchmark for coding agents. `kbench --help` lists the commands.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/app.h"
#include "cli/sweep_commands.h"
#include "core/data_dir.h"
#include "core/version.h"
#include "deck/problem.h"
#include "target/ceilings.h"

namespace kb::cli {

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_option("--problems", g.problems_dir, "Problem deck folder (default: $KBENCH_PROBLEMS, else problems/ of the data folder: docs/install.md)");
  app.add_option("--hardware", g.hardware_dir, "Datasheet ceilings folder (default: $KBENCH_HARDWARE, else hardware/ of the data folder)");
  app.add_flag("--json", g.json, "Print machine-readable JSON on stdout");
}

void resolve_defaults(GlobalOptions& g) {
  if (g.problems_dir.empty()) {
    const char* env = std::getenv("KBENCH_PROBLEMS");
    g.problems_dir = env && *env ? std::filesystem::path(env) : data_dir() / "problems";
  }
  if (g.hardware_dir.empty()) {
    const char* env = std::getenv("KBENCH_HARDWARE");
    g.hardware_dir = env && *env ? std::filesystem::path(env) : data_dir() / "hardware";
  }
}

bool stdout_is_terminal() { return isatty(STDOUT_FILENO); }
bool stderr_is_terminal() { return isatty(STDERR_FILENO); }

}  // namespace kb::cli

int main(int argc, char** argv) {
  using namespace kb::cli;
  CLI::App app{"kbench: judge GPU kernels written by coding agents (correctness, integrity, speed of light)", "kbench"};
  app.set_version_flag("--version", "kbench " + kb::kbench_version());
  app.require_subcommand(1);
  GlobalOptions g;
  int exit_code = kExitPass;
  register_deck_commands(app, g, exit_code);
  register_eval_commands(app, g, exit_code);
  register_build_command(app, g, exit_code);
  register_ceilings_command(app, g, exit_code);
  register_targets_command(app, g, exit_code);
  register_prepare_command(app, g, exit_code);
  register_run_command(app, g, exit_code);
  register_gateway_command(app, g, exit_code);
  register_annotate_command(app, g, exit_code);
  register_dump_command(app, g, exit_code);
  register_site_command(app, g, exit_code);
  register_doctor_command(app, exit_code);
  register_agent_loop_command(app, exit_code);
  register_results_commands(app, g, exit_code);
  register_sweep_commands(app, g, exit_code);
  register_worker_command(app, exit_code);
  register_completion_command(app, exit_code);
  // CLI11 answers `kbench frobnicate --help` with the top-level help and exit 0; an unknown
  // command is a usage error whatever follows it.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->check_name(argv[1])) known = true;
      if (sub->get_name().rfind("__", 0) != 0) names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "kbench: unknown command '" << argv[1] << "' (commands: " << names << "; see kbench --help)\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const kb::SpecError& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const kb::HardwareError& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "kbench: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return exit_code;
}
