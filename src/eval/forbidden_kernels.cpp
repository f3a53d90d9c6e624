#include "eval/forbidden_kernels.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "eval/static_scan.h"

namespace kb {

std::optional<Finding> check_forbidden_kernels(const std::vector<std::string>& forbidden, const SassReport& report) {
  if (!report.available || forbidden.empty()) return std::nullopt;
  std::vector<std::regex> patterns;
  for (const auto& f : forbidden) patterns.push_back(forbidden_pattern(f));
  constexpr size_t kNamed = 10;
  std::vector<Evidence> evidence;
  std::set<std::string> seen;  // a kernel is listed once per arch it was built for
  std::string listed;
  size_t hits = 0;
  for (const auto& k : report.listing.kernels) {
    const std::string& name = k.demangled.empty() ? k.name : k.demangled;
    if (!seen.insert(k.name).second) continue;
    for (size_t i = 0; i < patterns.size(); ++i) {
      if (!std::regex_search(name, patterns[i])) continue;
      if (++hits <= kNamed) {
        evidence.push_back({"kernel", "", 0, k.name, name, fmt::format("pattern '{}' forbidden by the problem's policy", forbidden[i])});
        listed += fmt::format("\n  {} (pattern '{}')", name.size() > 200 ? name.substr(0, 197) + "..." : name, forbidden[i]);
      }
      break;
    }
  }
  if (hits == 0) return std::nullopt;
  return Finding{Reason::forbidden_kernel,
                 fmt::format("the solution's machine code holds {} kernel{} of a library the problem forbids "
                             "(docs/threat-model.md), compiled into its own module:{}{}",
                             hits, hits == 1 ? "" : "s", listed, hits > kNamed ? fmt::format("\n  ... and {} more", hits - kNamed) : ""),
                 std::move(evidence)};
}

}  // namespace kb
