#include "cli/report.h"

#include "report/verdict_table.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace kb::cli {
namespace {

std::string paint(const std::string& s, const char* code, bool color) {
  return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
}

std::string rate(double v, const char* unit) { return report::rate_text(v, unit); }

// Text that came from outside kbench (compiler messages quoting the solution's source, a worker's
// stderr, a folder name) with its control bytes shown as ^X: raw escape sequences would let a
// solution repaint the terminal, a fake verdict line included. Newlines and tabs stay.
std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += '^';
      out += static_cast<char>(c == 0x7f ? '?' : c + 0x40);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

void print_result(std::ostream& out, const EvalResult& r, bool color) {
  out << fmt::format("kbench {} {}  ·  target {} ({})\n  solution {}\n", r.mode, r.problem, r.target, r.device,
                     terminal_text(r.solution_dir));
  const bool build_error = !r.build.ok && r.finding.reason == Reason::build_error;
  if (build_error) out << "\n" << terminal_text(r.finding.message) << "\n";
  if ((!build_error && !r.shapes.empty()) || (r.baseline && r.baseline->verdict() == Verdict::pass))
    out << "\n" << report::verdict_table(r, color);
  // A baseline that passed is in the table; one that did not is said here.
  if (r.baseline && r.baseline->verdict() != Verdict::pass) {
    const EvalResult& b = *r.baseline;
    const std::string& m = b.finding.message;
    out << fmt::format("\n  baseline: {} (reference line, not scored)\n", r.baseline_description.empty() ? b.solution_dir : r.baseline_description);
    out << fmt::format("    not available: {} ({})\n", reason_name(b.finding.reason), terminal_text(m.substr(0, m.find('\n'))));
  }
  if (r.verdict() == Verdict::pass) {
    out << "\n  verdict " << paint("PASS", "32;1", color);
    if (r.peak_fraction_geomean)
      out << fmt::format("   peak_fraction {:.4f} ({}-bound, geomean)   speed-of-light {:.4f}", *r.peak_fraction_geomean,
                         r.regime, *r.sol_fraction_geomean);
    if (r.achievable_fraction_geomean) out << fmt::format("   achievable {:.4f}", *r.achievable_fraction_geomean);
    out << "\n";
    // KernelBench v3's view beside kbench's: the score stays the fraction of the ceiling above.
    if (r.speedup_vs_baseline && r.beats_baseline)
      out << fmt::format("  vs baseline {:.3f}x (geomean of baseline/solution medians): {}\n", *r.speedup_vs_baseline,
                         *r.beats_baseline ? paint("beats the baseline", "32", color) : "does not beat the baseline");
    if (r.compute_peak && r.memory_peak)
      out << fmt::format("  ceilings {} ({}): {} = {}, {} = {}\n", r.ceilings_id, r.ceilings_measured ? "measured" : "datasheet",
                         r.compute_peak_key, rate(*r.compute_peak, "FLOP/s"), r.memory_peak_key, rate(*r.memory_peak, "B/s"))
          << (r.launch_floor_seconds ? fmt::format("  launch floor {}\n", report::duration_text(*r.launch_floor_seconds))
                                     : r.target == "cuda" ? "  launch floor not measured yet (`kbench ceilings --target cuda`): no achievable fraction\n"
                                                          : "");
  } else {
    out << "\n  verdict " << paint(r.verdict() == Verdict::fail ? "FAIL" : "ERROR", "31;1", color) << " ("
        << reason_name(r.finding.reason) << ")\n";
    if (r.finding.reason != Reason::build_error) out << "  " << terminal_text(r.finding.message) << "\n";
  }
  out << report::launch_cost_line(r);
  // What the machine code holds (docs/result-schema.md `sass`) and how the run reads (docs/annotations.md).
  if (r.sass && r.sass->available) {
    std::map<std::string, size_t> tensor, tma;
    for (const auto& k : r.sass->listing.kernels) {
      for (const auto& [c, n] : k.tensor_core()) tensor[c] += n;
      for (const auto& [c, n] : k.tma()) tma[c] += n;
    }
    auto list = [](const std::map<std::string, size_t>& m) {
      std::string s;
      for (const auto& [c, n] : m) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", c, n);
      return s.empty() ? std::string("none") : s;
    };
    out << fmt::format("  sass     {} kernel{}; tensor cores: {}; TMA: {}\n", r.sass->listing.kernels.size(),
                       r.sass->listing.kernels.size() == 1 ? "" : "s", list(tensor), list(tma));
  } else if (r.sass) {
    out << "  sass     not read: " << r.sass->note << "\n";
  }
  if (r.annotation)
    out << fmt::format("  annotation {}{}\n", r.annotation->verdict, r.annotation->needs_review ? " (needs review)" : "");
}

}  // namespace kb::cli
