// `kbench doctor`'s judgement: from what was found on a machine (doctor/facts.h) to one check per
// piece, each with what was found and, when it is missing, the command that fixes it; and whether
// the target asked about (by default the one `--target auto` means on this machine) has everything
// it needs. Pure: no probe, no file, no clock; tests feed it invented machines.
#pragma once

#include <string>
#include <vector>

#include "doctor/facts.h"

namespace kb::doctor {

enum class Status {
  ok,       // there and working
  missing,  // absent or not working
  warning,  // there, but something about it will cost results (a throttled GPU, a full disk...)
  info,     // optional, or a fact worth knowing (the GPU's clocks)
};
const char* status_name(Status s);  // "ok", "missing", "warning", "info"

struct Check {
  std::string area;     // "evaluation", "host target", "cuda target", "agent runs", "sweeps", "results"
  std::string name;     // "C++ compiler", "nvcc", "GPU 0", ...
  Status status = Status::ok;
  bool required = false;  // the target diagnosed cannot run without it
  std::string detail;   // what was found, or what is wrong
  std::string fix;      // when not ok: the command (or step) that fixes it; empty when ok
};

struct Diagnosis {
  std::string target;         // "host" or "cuda": the target diagnosed
  std::string target_reason;  // why that one ("no NVIDIA GPU on this machine", "--target cuda")
  std::vector<Check> checks;  // in the order printed, grouped by area
  std::vector<std::string> blocking;  // names of the required checks that are not ok
  bool ready() const { return blocking.empty(); }
  // 0: everything the target needs is there; 1: something it needs is missing (docs/cli.md).
  int exit_code() const { return ready() ? 0 : 1; }
};

// `target`: "auto" (cuda when the machine has an NVIDIA GPU -- listed by the driver or seen by
// CUDA -- else host), "host" or "cuda". Throws std::invalid_argument for any other name.
Diagnosis diagnose(const MachineFacts& facts, const std::string& target = "auto");

}  // namespace kb::doctor
