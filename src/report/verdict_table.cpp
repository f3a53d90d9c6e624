#include "report/verdict_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace kb::report {
namespace {

constexpr size_t kColumns = 11;
// Column 0 is the row's mark (ok, FAIL, base), printed with the shape's label under one header.
const std::array<const char*, kColumns> kHeader = {"", "shape", "check", "median", "±iqr", "hot", "FLOP/s", "bytes/s", "peak", "SoL", "achievable"};
// Left-aligned: the mark, the label and the check count; the figures are right-aligned.
constexpr std::array<bool, kColumns> kLeft = {true, true, true, false, false, false, false, false, false, false, false};

using Row = std::array<std::string, kColumns>;

// Between columns (the mark and its label are one column apart by a single space).
constexpr const char* kGap = "  ";

// Display width: the header's "±" is one column but two bytes; everything else kbench puts in a
// cell is ASCII or, for a label, counted the same way (UTF-8 continuation bytes take no column).
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

Row shape_row(const ShapeResult& s, std::string mark, bool with_checks) {
  Row row;
  row.fill("-");
  row[0] = std::move(mark);
  row[1] = s.label;
  if (!with_checks) {
    row[2] = "";
    row[4] = "";
  } else if (!s.checks.empty()) {
    size_t passed = 0;
    for (const auto& c : s.checks) passed += c.pass;
    row[2] = fmt::format("{}/{}", passed, s.checks.size());
  }
  if (s.timing) {
    row[3] = duration_text(s.timing->seconds.median);
    if (with_checks && s.timing->seconds.median > 0) row[4] = percent(s.timing->seconds.iqr / s.timing->seconds.median);
    if (std::isfinite(s.timing->hot_seconds)) row[5] = duration_text(s.timing->hot_seconds);
  }
  if (s.roofline) {
    row[6] = rate_text(s.roofline->flops_per_s, "FLOP/s");
    row[7] = rate_text(s.roofline->bytes_per_s, "B/s");
    row[8] = percent(s.roofline->peak_fraction);
    row[9] = percent(s.roofline->sol_fraction);
    if (s.roofline->achievable_fraction) row[10] = percent(*s.roofline->achievable_fraction);
  }
  return row;
}

}  // namespace

std::string rate_text(double v, const char* unit) {
  if (v >= 1e12) return fmt::format("{:.2f} T{}", v / 1e12, unit);
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (v >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  if (v >= 1e3) return fmt::format("{:.2f} k{}", v / 1e3, unit);
  return fmt::format("{:.2f} {}", v, unit);
}

std::string duration_text(double s) {
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string launch_cost_line(const EvalResult& r) {
  if (r.timing_policy.steady_floor) {
    std::vector<std::string> figures;
    bool any = false;
    for (const auto& s : r.shapes) {
      const TimingRecord* t = s.timing ? &*s.timing : nullptr;
      if (!t || !t->steady) {
        figures.push_back("-");
        continue;
      }
      any = true;
      const std::optional<double> cold = cold_median(*t);
      figures.push_back(cold ? fmt::format("{} (cold {})", duration_text(t->steady->seconds), duration_text(*cold))
                             : duration_text(t->steady->seconds));
    }
    if (!any) return "";
    return fmt::format("  steady   calls back to back with their launches, per call and shape: {} (no call scores "
                       "below it: the steady floor)\n",
                       fmt::join(figures, ", "));
  }
  if (r.target != "cuda" || r.timing_policy.blocking_kernel) return "";
  std::vector<std::string> medians;
  bool any = false;
  for (const auto& s : r.shapes) {
    const std::optional<Summary> host = s.timing ? host_call_summary(*s.timing) : std::nullopt;
    any = any || host.has_value();
    medians.push_back(host ? duration_text(host->median) : "-");
  }
  if (!any) return "";
  return fmt::format("  launches the host's time inside each timed call, median per shape: {} (in the median: "
                     "timed with its launches)\n",
                     fmt::join(medians, ", "));
}

std::string verdict_table(const EvalResult& r, bool color) {
  std::vector<Row> rows;
  std::vector<bool> failed;
  for (const auto& s : r.shapes) {
    rows.push_back(shape_row(s, s.pass ? "ok" : "FAIL", true));
    failed.push_back(!s.pass);
  }
  if (r.baseline && r.baseline->verdict() == Verdict::pass)
    for (const auto& s : r.baseline->shapes)
      if (s.timing && s.roofline) {
        rows.push_back(shape_row(s, "base", false));
        failed.push_back(false);
      }

  // Widths: each column its widest cell or header. The header's "shape" stands over the mark and
  // the label together (the label column's own header is empty).
  std::array<size_t, kColumns> w{};
  for (size_t c = 2; c < kColumns; ++c) w[c] = width(kHeader[c]);
  for (const auto& row : rows)
    for (size_t c = 0; c < kColumns; ++c) w[c] = std::max(w[c], width(row[c]));
  const size_t shape_w = std::max(w[0] + 1 + w[1], width(kHeader[1]));
  w[1] = shape_w - w[0] - 1;

  auto cell = [&](size_t c, const std::string& text) {
    const std::string pad(w[c] - std::min(w[c], width(text)), ' ');
    return kLeft[c] ? text + pad : pad + text;
  };
  auto finish = [](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string h = "  " + std::string(kHeader[1]) + std::string(shape_w - width(kHeader[1]), ' ');
  for (size_t c = 2; c < kColumns; ++c) h += kGap + cell(c, kHeader[c]);
  std::string out = finish(h);
  auto line = [&](const Row& row, bool paint_fail) {
    std::string mark = cell(0, row[0]);
    if (color && row[0] != "base") mark = fmt::format("\033[{}m{}\033[0m", paint_fail ? "31;1" : "32", mark);
    std::string s = "  " + mark;
    s += " " + cell(1, row[1]);
    for (size_t c = 2; c < kColumns; ++c) s += kGap + cell(c, row[c]);
    return finish(s);
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == r.shapes.size()) {
      const EvalResult& b = *r.baseline;
      out += fmt::format("\n  baseline: {} (reference line, not scored)\n",
                         r.baseline_description.empty() ? b.solution_dir : r.baseline_description);
    }
    out += line(rows[i], failed[i]);
  }
  return out;
}

}  // namespace kb::report
