// `kbench targets`: which targets this machine and this build can run.
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "core/json_text.h"
#include "target/target.h"

namespace kb::cli {

void register_targets_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("targets", "List the targets available here (host always; cuda with a GPU)");
  add_global_options(*cmd, g);
  cmd->callback([&g, &exit_code] {
    nlohmann::json j = nlohmann::json::array();
    for (const char* name : {"host", "cuda"}) {
      if (std::string(name) == "cuda" && !cuda_available()) continue;
      auto t = make_target(name);
      j.push_back({{"target", t->name()}, {"device", t->open_device()->description()}});
    }
    if (g.json) {
      std::cout << kb::json_text(j) << "\n";
    } else {
      for (const auto& t : j) std::cout << fmt::format("{:<6} {}\n", t["target"].get<std::string>(), t["device"].get<std::string>());
    }
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
