// `kbench doctor`'s printers: the same Diagnosis as text for people and as JSON for machines.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "doctor/diagnosis.h"

namespace kb::doctor {

// One line per check under its area's heading, each missing piece followed by its fix, and a last
// line saying whether the target is ready.
std::string to_text(const Diagnosis& d);

// {"target", "target_reason", "ready", "exit_code", "blocking": [names],
//  "checks": [{"area", "name", "status", "required", "detail", "fix"}]}
nlohmann::json to_json(const Diagnosis& d);

}  // namespace kb::doctor
