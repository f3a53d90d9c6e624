// Shared pieces of the kbench command line.
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "verdict/reason.h"

namespace kb::cli {

// Exit codes (docs/cli.md); a judged result's is its reason's (verdict/reason.h).
inline constexpr int kExitPass = exit_code::pass;
inline constexpr int kExitFail = exit_code::fail;
inline constexpr int kExitUsage = exit_code::usage;
inline constexpr int kExitInternal = exit_code::internal;

// Raised for bad user input (unknown problem, missing folder...): exit code 2, message as is.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GlobalOptions {
  std::filesystem::path problems_dir;  // --problems, KBENCH_PROBLEMS, else <data_dir()>/problems
  std::filesystem::path hardware_dir;  // --hardware, KBENCH_HARDWARE, else <data_dir()>/hardware
  bool json = false;
};

void add_global_options(CLI::App& app, GlobalOptions& g);
void resolve_defaults(GlobalOptions& g);
bool stdout_is_terminal();
bool stderr_is_terminal();

// Each registers its subcommands; the callback returns the exit code through `exit_code`.
void register_deck_commands(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_eval_commands(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_build_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_ceilings_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_worker_command(CLI::App& app, int& exit_code);
void register_targets_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_prepare_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_run_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_gateway_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_annotate_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_dump_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_agent_loop_command(CLI::App& app, int& exit_code);
void register_results_commands(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_site_command(CLI::App& app, GlobalOptions& g, int& exit_code);
void register_doctor_command(CLI::App& app, int& exit_code);
// Walks `app` (every command registered before it) when run: register it last.
void register_completion_command(CLI::App& app, int& exit_code);

}  // namespace kb::cli
