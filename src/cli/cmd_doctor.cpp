// `kbench doctor`: what this machine has and lacks for each target, for agent runs and for sweeps,
// each missing piece with the command that fixes it. Exit 0 when the target asked about (by
// default the one `--target auto` means here) has everything it needs, 1 when not (docs/cli.md).
#include <iostream>
#include <memory>

#include "cli/app.h"
#include "core/json_text.h"
#include "doctor/diagnosis.h"
#include "doctor/probe.h"
#include "doctor/report.h"

namespace kb::cli {

namespace {
struct DoctorOptions {
  std::string target = "auto";
  std::filesystem::path runs_dir = "runs";
  bool json = false;
};
}  // namespace

void register_doctor_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand("doctor", "What this machine has and lacks for each target, agent runs and sweeps, "
                                           "with the command that fixes each missing piece");
  cmd->add_option("--target", o->target, "The target whose needs decide the exit code: auto (cuda with a GPU, else host), host or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "host", "cuda"}));
  cmd->add_option("--runs-dir", o->runs_dir, "The runs folder to check (as kbench run's --runs-dir)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print machine-readable JSON on stdout");
  cmd->callback([o, &exit_code] {
    doctor::ProbeOptions p;
    p.runs_dir = o->runs_dir;
    const doctor::Diagnosis d = doctor::diagnose(doctor::probe_machine(p), o->target);
    if (o->json)
      std::cout << kb::json_text(doctor::to_json(d)) << "\n";
    else
      std::cout << doctor::to_text(d);
    exit_code = d.exit_code();
  });
}

}  // namespace kb::cli
