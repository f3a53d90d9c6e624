#include "doctor/report.h"

#include <fmt/format.h>

namespace kb::doctor {

std::string to_text(const Diagnosis& d) {
  std::string out = fmt::format("kbench doctor: the {} target ({})\n", d.target, d.target_reason);
  std::string area;
  for (const Check& c : d.checks) {
    if (c.area != area) {
      area = c.area;
      out += "\n" + area + "\n";
    }
    // A required piece that is missing is marked, so that the blocking ones stand out.
    const std::string status = c.required && c.status != Status::ok ? fmt::format("{}*", status_name(c.status)) : status_name(c.status);
    out += fmt::format("  {:<8} {:<20} {}\n", status, c.name, c.detail);
    if (!c.fix.empty() && c.status != Status::ok) out += fmt::format("  {:<8} {:<20} fix: {}\n", "", "", c.fix);
  }
  out += "\n";
  if (d.ready()) {
    out += fmt::format("Ready: everything the {} target needs is here.\n", d.target);
  } else {
    std::string names;
    for (const auto& n : d.blocking) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("Not ready for the {} target: missing {} (marked *).\n", d.target, names);
  }
  return out;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json checks = nlohmann::json::array();
  for (const Check& c : d.checks)
    checks.push_back({{"area", c.area}, {"name", c.name}, {"status", status_name(c.status)}, {"required", c.required},
                      {"detail", c.detail}, {"fix", c.fix}});
  return {{"target", d.target}, {"target_reason", d.target_reason}, {"ready", d.ready()}, {"exit_code", d.exit_code()},
          {"blocking", d.blocking}, {"checks", checks}};
}

}  // namespace kb::doctor
