// Registration of `kbench sweep` (and `kbench sweep status`): declared apart from app.h so that
// adding it recompiles main.cpp alone.
#pragma once

#include "cli/app.h"

namespace kb::cli {

void register_sweep_commands(CLI::App& app, GlobalOptions& g, int& exit_code);

}  // namespace kb::cli
