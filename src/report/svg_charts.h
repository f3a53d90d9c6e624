// The site's charts, written by kbench as SVG (no chart library, no script): the leaderboard
// heatmap, pass counts per entrant, cost against score per entrant, and a roofline per shape.
// Each chart is an accessible image (role="img", a <title> and a description), every value is
// printed as text next to its mark, and all text is escaped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/leaderboard.h"

namespace kb::report {

// The heatmap colour of a peak fraction in [0, 1] (clamped), and a text colour readable on it
// (contrast ratio >= 4.5, WCAG 2.1 AA for normal text).
struct CellColour {
  std::string background, text;
};
CellColour heat_colour(double fraction);
// Contrast ratio of two "#rrggbb" colours (WCAG 2.1 definition).
double contrast_ratio(const std::string& a, const std::string& b);

std::string heatmap_svg(const DeviceBoard& b);
std::string pass_count_svg(const DeviceBoard& b);
// Entrants with a known cost only; the others are listed under the chart by the caller.
std::string cost_score_svg(const DeviceBoard& b);

struct RooflinePoint {
  std::string label;               // entrant, or "baseline"
  double flops_per_s = 0, bytes_per_s = 0, flops = 0, bytes = 0;
  bool reference = false;          // the baseline: drawn as a reference mark
};

// Achieved FLOP/s against arithmetic intensity (FLOP per byte), log-log, under the compute and
// memory ceilings the scores used. Empty string when nothing can be drawn.
std::string roofline_svg(const std::string& title, double compute_peak, double memory_peak,
                         const std::vector<RooflinePoint>& points);

// "0.412", "—" for none.
std::string fraction_text(std::optional<double> v);

}  // namespace kb::report
