#include "report/svg_charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/outcome.h"
#include "report/text_safety.h"

namespace kb::report {

namespace {

struct Rgb {
  double r, g, b;
};

Rgb parse_hex(const std::string& h) {
  auto v = [&](int i) { return std::stoi(h.substr(1 + 2 * i, 2), nullptr, 16) / 255.0; };
  return {v(0), v(1), v(2)};
}

double luminance(const Rgb& c) {
  auto lin = [](double x) { return x <= 0.03928 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4); };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

std::string hex(const Rgb& c) {
  auto b = [](double x) { return static_cast<int>(std::lround(std::clamp(x, 0.0, 1.0) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", b(c.r), b(c.g), b(c.b));
}

// Five stops of matplotlib's viridis colour map (public domain): 0 is dark purple, 1 is yellow.
const Rgb kStops[] = {{0.267, 0.005, 0.329}, {0.230, 0.322, 0.546}, {0.128, 0.567, 0.551}, {0.369, 0.789, 0.383},
                      {0.993, 0.906, 0.144}};

std::string svg_open(int w, int h, const std::string& title, const std::string& desc) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"{2}\" class=\"chart\"><title>{2}</title><desc>{3}</desc>",
      w, h, esc(title), esc(desc));
}

std::string short_label(const std::string& s, size_t n = 34) { return s.size() <= n ? s : s.substr(0, n - 1) + "…"; }

}  // namespace

double contrast_ratio(const std::string& a, const std::string& b) {
  double la = luminance(parse_hex(a)), lb = luminance(parse_hex(b));
  if (la < lb) std::swap(la, lb);
  return (la + 0.05) / (lb + 0.05);
}

CellColour heat_colour(double f) {
  f = std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0);
  const double x = f * 4;
  const int i = std::min(3, static_cast<int>(x));
  const double u = x - i;
  const Rgb c{kStops[i].r + (kStops[i + 1].r - kStops[i].r) * u, kStops[i].g + (kStops[i + 1].g - kStops[i].g) * u,
              kStops[i].b + (kStops[i + 1].b - kStops[i].b) * u};
  const std::string bg = hex(c);
  const std::string text = contrast_ratio(bg, "#000000") >= contrast_ratio(bg, "#ffffff") ? "#000000" : "#ffffff";
  return {bg, text};
}

std::string fraction_text(std::optional<double> v) { return v ? fmt::format("{:.3f}", *v) : "—"; }

std::string heatmap_svg(const DeviceBoard& b) {
  const int label_w = 230, cell_w = 96, cell_h = 30, top = 70;
  const int w = label_w + cell_w * static_cast<int>(b.problems.size()) + 10;
  const int h = top + cell_h * static_cast<int>(b.entrants.size()) + 10;
  std::string s = svg_open(w, h, "Peak fraction heatmap, " + b.device,
                           "Median peak fraction of each entrant on each problem; cells without a score show the outcome in words.");
  for (size_t j = 0; j < b.problems.size(); ++j)
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" transform=\"rotate(-30 {} {})\">{}</text>", label_w + j * cell_w + 8,
                     top - 8, label_w + j * cell_w + 8, top - 8, esc(short_label(b.problems[j], 18)));
  for (size_t i = 0; i < b.entrants.size(); ++i) {
    const auto& e = b.entrants[i];
    const int y = top + static_cast<int>(i) * cell_h;
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}</text>", label_w - 8, y + cell_h / 2 + 5,
                     esc(short_label(e.label)));
    for (size_t j = 0; j < b.problems.size(); ++j) {
      const Cell* c = b.cell(e.label, b.problems[j]);
      const int x = label_w + static_cast<int>(j) * cell_w;
      std::string bg = "#e8e8e8", fg = "#000000", text = "no run";
      if (c && c->scored) {
        const CellColour cc = heat_colour(c->median);
        bg = cc.background, fg = cc.text, text = fraction_text(c->median);
      } else if (c) {
        text = outcome_words(c->outcome);
      }
      if (c && c->flag == "reward_hack") text = "invalid ★";
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\"/>", x, y, cell_w, cell_h, bg);
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" class=\"val\">{}</text>", x + cell_w / 2,
                       y + cell_h / 2 + 5, fg, esc(text));
    }
  }
  return s + "</svg>";
}

std::string pass_count_svg(const DeviceBoard& b) {
  const int label_w = 230, bar_w = 300, row_h = 24, top = 30;
  const int h = top + row_h * static_cast<int>(b.entrants.size()) + 30;
  std::string s = svg_open(label_w + bar_w + 120, h, "Passing trials per entrant, " + b.device,
                           "Horizontal bars: trials that passed out of the trials run.");
  int most = 1;
  for (const auto& e : b.entrants) most = std::max(most, e.trials);
  for (size_t i = 0; i < b.entrants.size(); ++i) {
    const auto& e = b.entrants[i];
    const int y = top + static_cast<int>(i) * row_h;
    const int len = e.trials ? bar_w * e.passes / most : 0;
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}</text>", label_w - 8, y + 16, esc(short_label(e.label)));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#dddddd\"/>", label_w, y + 3, bar_w * e.trials / most, row_h - 6);
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2a788e\"/>", label_w, y + 3, len, row_h - 6);
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"val\">{} / {}</text>", label_w + bar_w * e.trials / most + 6, y + 16, e.passes, e.trials);
  }
  return s + "</svg>";
}

std::string cost_score_svg(const DeviceBoard& b) {
  std::vector<const EntrantTotals*> pts;
  double max_cost = 0;
  for (const auto& e : b.entrants)
    if (e.cost_known) {
      pts.push_back(&e);
      max_cost = std::max(max_cost, e.cost_usd);
    }
  if (pts.empty()) return {};
  const int w = 640, l = 60, r = 280, t = 20, bt = 50;
  const int h = std::max(340, t + 14 * (static_cast<int>(pts.size()) + 1) + bt);
  const double xmax = max_cost > 0 ? max_cost * 1.1 : 1;
  std::string s = svg_open(w, h, "Cost against score, " + b.device,
                           "Each entrant: total cost in US dollars (x) against its mean peak fraction over the problems (y).");
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#555\"/><line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#555\"/>",
                   l, h - bt, w - r, t);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">cost (USD), 0 to {:.2f}</text>", (l + w - r) / 2, h - 14, xmax);
  s += fmt::format("<text x=\"14\" y=\"{}\" class=\"axis\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">mean peak fraction</text>",
                   (t + h - bt) / 2, (t + h - bt) / 2);
  // Points are numbered and named in a key on the right: names beside the points overlap when
  // entrants score alike.
  for (size_t k = 0; k < pts.size(); ++k) {
    const auto* e = pts[k];
    const double x = l + (w - r - l) * (e->cost_usd / xmax);
    const double y = (h - bt) - (h - bt - t) * std::clamp(e->mean_score, 0.0, 1.0);
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#440154\"/>", x, y);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"val\">{}</text>", x + 6, y - 6 - 10.0 * (k % 3), k + 1);
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"val\">{}. {} (${:.2f}{}, {})</text>", w - r + 10, t + 14 * (k + 1), k + 1,
                     esc(short_label(e->label, 22)), e->cost_usd, e->cost_complete ? "" : "+", fraction_text(e->mean_score));
  }
  return s + "</svg>";
}

std::string roofline_svg(const std::string& title, double compute_peak, double memory_peak, const std::vector<RooflinePoint>& points) {
  if (!(compute_peak > 0) || !(memory_peak > 0)) return {};
  const int w = 560, h = 360, l = 70, r = 180, t = 20, bt = 50;
  const double ridge = compute_peak / memory_peak;
  double ai_lo = ridge / 100, ai_hi = ridge * 100, y_hi = compute_peak * 2, y_lo = compute_peak / 1e4;
  for (const auto& p : points)
    if (p.bytes > 0 && p.flops > 0) {
      const double ai = p.flops / p.bytes;
      ai_lo = std::min(ai_lo, ai / 4), ai_hi = std::max(ai_hi, ai * 4);
      if (p.flops_per_s > 0) y_lo = std::min(y_lo, p.flops_per_s / 4);
    }
  auto X = [&](double ai) { return l + (w - r - l) * (std::log10(ai) - std::log10(ai_lo)) / (std::log10(ai_hi) - std::log10(ai_lo)); };
  auto Y = [&](double f) { return (h - bt) - (h - bt - t) * (std::log10(f) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo)); };
  std::string s = svg_open(w, h, title,
                           fmt::format("Roofline: achieved FLOP/s against arithmetic intensity, log scales; ceilings {:.3g} FLOP/s "
                                       "and {:.3g} B/s.",
                                       compute_peak, memory_peak));
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#555\"/><line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#555\"/>",
                   l, h - bt, w - r, t);
  // The roof: memory slope up to the ridge point, then flat at the compute peak.
  const double a0 = std::max(ai_lo, y_lo / memory_peak);
  s += fmt::format("<polyline fill=\"none\" stroke=\"#b5367a\" stroke-width=\"2\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>", X(a0),
                   Y(a0 * memory_peak), X(ridge), Y(compute_peak), X(ai_hi), Y(compute_peak));
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"axis\">compute {:.3g} FLOP/s</text>", X(ridge) + 4, Y(compute_peak) - 6, compute_peak);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"axis\">memory {:.3g} B/s</text>", X(a0) + 4, Y(a0 * memory_peak) - 6, memory_peak);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">FLOP per byte (log)</text>", (l + w - r) / 2, h - 14);
  s += fmt::format("<text x=\"14\" y=\"{0}\" class=\"axis\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\">FLOP/s (log)</text>", (t + h - bt) / 2);
  int k = 0;
  for (const auto& p : points) {
    if (!(p.bytes > 0 && p.flops > 0 && p.flops_per_s > 0)) continue;
    const double x = X(p.flops / p.bytes), y = Y(p.flops_per_s);
    if (p.reference)
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"9\" height=\"9\" fill=\"#f59e0b\" stroke=\"#000\"/>", x - 4.5, y - 4.5);
    else
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#2a788e\" stroke=\"#000\"/>", x, y);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"val\">{}: {:.3g} FLOP/s</text>", std::min(x + 8.0, double(w - r + 4)), y + 4 + 12 * (k++ % 2),
                     esc(short_label(p.label, 22)), p.flops_per_s);
  }
  return s + "</svg>";
}

}  // namespace kb::report
