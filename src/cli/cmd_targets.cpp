// `kbench targets`: which targets this machine and this build can run, and on each whether Python
// solutions (target/python_solution.h) can run there or why not.
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "core/json_text.h"
#include "target/python_solution.h"
#include "target/target.h"

namespace kb::cli {

namespace {

// Whether Python solutions run on `target`, with the interpreter and its torch and triton.
nlohmann::json python_status(const std::string& target) {
  nlohmann::json j;
  const auto why = python_unavailable_reason(target);
  j["available"] = !why.has_value();
  if (why) j["reason"] = *why;
  const std::filesystem::path exe = configured_python();
  if (!exe.empty()) {
    const PythonInterpreter& p = probe_python(exe);
    j["interpreter"] = exe.string();
    if (!p.version.empty()) j["version"] = p.version;
    if (!p.torch_version.empty()) j["torch"] = p.torch_version + (p.torch_cuda.empty() ? "" : " (CUDA " + p.torch_cuda + ")");
    if (!p.triton_version.empty()) j["triton"] = p.triton_version;
  }
  return j;
}

std::string python_line(const nlohmann::json& py) {
  if (!py.value("available", false)) return "Python solutions unavailable: " + py.value("reason", std::string("?"));
  std::string s = "Python solutions available: " + py.value("interpreter", std::string()) + " (Python " +
                  py.value("version", std::string("?")) + ", torch " + py.value("torch", std::string("?"));
  if (py.contains("triton")) s += ", triton " + py["triton"].get<std::string>();
  return s + ")";
}

}  // namespace

void register_targets_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("targets", "List the targets available here (host always; cuda with a GPU) and whether "
                                            "Python solutions run on each");
  add_global_options(*cmd, g);
  cmd->callback([&g, &exit_code] {
    nlohmann::json j = nlohmann::json::array();
    for (const char* name : {"host", "cuda"}) {
      if (std::string(name) == "cuda" && !cuda_available()) continue;
      auto t = make_target(name);
      j.push_back({{"target", t->name()}, {"device", t->device_description()}, {"python", python_status(name)}});
    }
    if (g.json) {
      std::cout << kb::json_text(j) << "\n";
    } else {
      for (const auto& t : j)
        std::cout << fmt::format("{:<6} {}\n       {}\n", t["target"].get<std::string>(), t["device"].get<std::string>(),
                                 python_line(t["python"]));
    }
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
