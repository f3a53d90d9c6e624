// `kbench doctor`'s probes: the one part of the doctor that looks at the machine. Everything is
// read only: programs are asked their version, bwrap is started around /bin/true, nvidia-smi is
// queried, /proc and /sys are read; no setting (clocks included) is changed and nothing is
// installed or measured.
#pragma once

#include <filesystem>

#include "doctor/facts.h"

namespace kb::doctor {

struct ProbeOptions {
  std::filesystem::path runs_dir = "runs";  // the folder whose writability is reported
  bool agent_versions = true;               // ask each installed agent CLI its version (a second or two each)
};

MachineFacts probe_machine(const ProbeOptions& options = {});

}  // namespace kb::doctor
