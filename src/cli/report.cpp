#include "cli/report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace kb::cli {
namespace {

std::string paint(const std::string& s, const char* code, bool color) {
  return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
}

std::string time_text(double s) {
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string rate(double v, const char* unit) {
  if (v >= 1e12) return fmt::format("{:.2f} T{}", v / 1e12, unit);
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  return fmt::format("{:.2f} M{}", v / 1e6, unit);
}

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
  if (!r.build.ok && r.failure == "build_error") {
    out << "\n" << terminal_text(r.message) << "\n";
  } else if (!r.shapes.empty()) {
    out << fmt::format("\n  {:<34} {:<9} {:>12} {:>8} {:>11} {:>12} {:>12} {:>7} {:>7}\n", "shape", "check", "median", "±iqr",
                       "hot", "FLOP/s", "bytes/s", "peak", "SoL");
    for (const auto& s : r.shapes) {
      size_t passed = 0;
      for (const auto& c : s.checks) passed += c.pass;
      std::string check = s.checks.empty() ? "-" : fmt::format("{}/{}", passed, s.checks.size());
      std::string med = "-", iqr = "-", hot = "-", fl = "-", by = "-", pk = "-", sol = "-";
      if (s.timing) {
        med = time_text(s.timing->seconds.median);
        iqr = s.timing->seconds.median > 0 ? fmt::format("{:.1f}%", 100 * s.timing->seconds.iqr / s.timing->seconds.median) : "-";
        if (std::isfinite(s.timing->hot_seconds)) hot = time_text(s.timing->hot_seconds);
      }
      if (s.roofline) {
        fl = rate(s.roofline->flops_per_s, "FLOP/s").substr(0, 12);
        by = rate(s.roofline->bytes_per_s, "B/s");
        pk = fmt::format("{:.1f}%", 100 * s.roofline->peak_fraction);
        sol = fmt::format("{:.1f}%", 100 * s.roofline->sol_fraction);
      }
      std::string mark = s.pass ? paint("ok  ", "32", color) : paint("FAIL", "31;1", color);
      out << fmt::format("  {} {:<29} {:<9} {:>12} {:>8} {:>11} {:>12} {:>12} {:>7} {:>7}\n", mark, s.label.substr(0, 29),
                         check, med, iqr, hot, fl, by, pk, sol);
    }
  }
  if (r.baseline) {
    const EvalResult& b = *r.baseline;
    out << fmt::format("\n  baseline: {} (reference line, not scored)\n", r.baseline_description.empty() ? b.solution_dir : r.baseline_description);
    if (b.verdict != "pass") {
      out << fmt::format("    not available: {} ({})\n", b.failure, terminal_text(b.message.substr(0, b.message.find('\n'))));
    } else {
      for (const auto& s : b.shapes)
        if (s.timing && s.roofline)
          out << fmt::format("  base {:<29} {:<9} {:>12} {:>8} {:>11} {:>12} {:>12} {:>7} {:>7}\n", s.label.substr(0, 29), "", time_text(s.timing->seconds.median),
                             "", std::isfinite(s.timing->hot_seconds) ? time_text(s.timing->hot_seconds) : "-", rate(s.roofline->flops_per_s, "FLOP/s").substr(0, 12), rate(s.roofline->bytes_per_s, "B/s"),
                             fmt::format("{:.1f}%", 100 * s.roofline->peak_fraction), fmt::format("{:.1f}%", 100 * s.roofline->sol_fraction));
    }
  }
  if (r.verdict == "pass") {
    out << "\n  verdict " << paint("PASS", "32;1", color);
    if (r.peak_fraction_geomean)
      out << fmt::format("   peak_fraction {:.4f} ({}-bound, geomean)   speed-of-light {:.4f}", *r.peak_fraction_geomean,
                         r.regime, *r.sol_fraction_geomean);
    out << "\n";
    if (r.compute_peak && r.memory_peak)
      out << fmt::format("  ceilings {} ({}): {} = {}, {} = {}\n", r.ceilings_id, r.ceilings_measured ? "measured" : "datasheet",
                         r.compute_peak_key, rate(*r.compute_peak, "FLOP/s"), r.memory_peak_key, rate(*r.memory_peak, "B/s"));
  } else {
    out << "\n  verdict " << paint(r.verdict == "fail" ? "FAIL" : "ERROR", "31;1", color) << " (" << r.failure << ")\n";
    if (r.failure != "build_error") out << "  " << terminal_text(r.message) << "\n";
  }
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
