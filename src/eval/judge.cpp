#include "eval/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "protocol/poison.h"

namespace kb {
namespace {

constexpr size_t kWorstShown = 5;

std::vector<int64_t> unflatten(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = shape[d] ? index % shape[d] : 0;
    index = shape[d] ? index / shape[d] : 0;
  }
  return c;
}

// x / u for u a power of two (an ULP), as a multiplication by 1 / u where that is a normal double:
// both are the correctly rounded value of the same real number, so the result is the same, without
// the division's latency (the judge divides by an ULP for every element of a float output).
double divide_by_power_of_two(double x, double u) {
  const auto biased = static_cast<int>((std::bit_cast<uint64_t>(u) >> 52) & 0x7FF);
  if (biased < 1 || biased > 2045 || (std::bit_cast<uint64_t>(u) & ((uint64_t{1} << 52) - 1)) != 0) return x / u;
  return x * std::bit_cast<double>(static_cast<uint64_t>(2046 - biased) << 52);
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Keeps the k elements with the largest excess.
void keep_worst(std::vector<ElementError>& worst, ElementError e) {
  auto by_excess = [](const ElementError& a, const ElementError& b) { return a.excess > b.excess; };
  if (worst.size() < kWorstShown) {
    worst.push_back(std::move(e));
    std::sort(worst.begin(), worst.end(), by_excess);
  } else if (e.excess > worst.back().excess) {
    worst.back() = std::move(e);
    std::sort(worst.begin(), worst.end(), by_excess);
  }
}

std::string coords_string(const std::vector<int64_t>& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + std::to_string(c[i]);
  return s + ")";
}

}  // namespace

std::string describe_tolerance(const Tolerance& t) {
  std::vector<std::string> parts;
  if (t.atol || t.rtol) parts.push_back(fmt::format("atol={:g} rtol={:g}", t.atol.value_or(0), t.rtol.value_or(0)));
  if (t.max_ulp) parts.push_back(fmt::format("max_ulp={:g}", *t.max_ulp));
  if (t.rel_l2) parts.push_back(fmt::format("rel_l2={:g}", *t.rel_l2));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

OutputVerdict judge_output(const TensorSpec& spec, const HostTensor& got, const std::vector<double>& expected,
                           const std::vector<int64_t>& rows) {
  OutputVerdict v;
  v.output = spec.name;
  const Tolerance& tol = spec.tolerance;
  const Poison poison = poison_for(spec.dtype);
  const bool float_out = info(spec.dtype).is_float;
  const bool use_ar = tol.atol.has_value() || tol.rtol.has_value();
  const double atol = tol.atol.value_or(0), rtol = tol.rtol.value_or(0);
  const int64_t n = got.numel();
  const int64_t row_len = got.shape.empty() ? 1 : std::max<int64_t>(got.shape.back(), 1);

  // What one stretch of elements found; stretches are judged in parallel (a large output holds
  // hundreds of millions of elements) and merged in index order, so the verdict, the sums and the
  // worst elements do not depend on the number of threads.
  struct Partial {
    int64_t checked = 0, unwritten = 0, failed = 0;
    double max_abs = 0, max_rel = 0, max_ulp = 0, err2 = 0, ref2 = 0;
    std::vector<ElementError> worst;
  };
  // The per-element work runs hundreds of millions of times on the deck's large outputs (moe_swiglu:
  // 403M elements, a dozen judged calls per shape), so it keeps its figures in scalars and builds an
  // ElementError only for an element that may enter the worst list; the figures are the same.
  const int poison_width = poison.bytes;
  const uint64_t poison_bits = poison.pattern & (poison_width == 8 ? ~0ull : ((1ull << (8 * poison_width)) - 1));
  const auto* raw = static_cast<const unsigned char*>(got.data());
  auto is_poison = [&](int64_t i) {
    const unsigned char* at = raw + i * poison_width;
    switch (poison_width) {
      case 1: return *at == poison_bits;
      case 2: { uint16_t w; std::memcpy(&w, at, 2); return w == poison_bits; }
      case 4: { uint32_t w; std::memcpy(&w, at, 4); return w == poison_bits; }
      default: { uint64_t w; std::memcpy(&w, at, 8); return w == poison_bits; }
    }
  };
  auto check = [&](int64_t i, Partial& pa) {
    ++pa.checked;
    const double e = expected[static_cast<size_t>(i)];
    const double g = got.get(i);
    const double abs_err = std::abs(g - e);
    const double rel_err = e != 0 ? abs_err / std::abs(e) : (abs_err == 0 ? 0 : std::numeric_limits<double>::infinity());
    double ulp_err = 0, excess = 0;
    bool ok = true;
    if (is_poison(i) && !same_value(g, e)) {
      ++pa.unwritten;
      ok = false;
      excess = std::numeric_limits<double>::infinity();
    } else if (std::isnan(e) || std::isinf(e) || !std::isfinite(g)) {
      // NaN and inf pass only where the reference has the same at the same place.
      ok = same_value(g, e);
      excess = ok ? 0 : std::numeric_limits<double>::infinity();
    } else {
      if (use_ar) {
        const double allowed = atol + rtol * std::abs(e);
        excess = std::max(excess, allowed > 0 ? abs_err / allowed : (abs_err > 0 ? INFINITY : 0));
        ok = ok && abs_err <= allowed;
      }
      if (float_out) {
        ulp_err = divide_by_power_of_two(abs_err, ulp_at(spec.dtype, e));
        pa.max_ulp = std::max(pa.max_ulp, ulp_err);
      }
      if (tol.max_ulp) {
        excess = std::max(excess, *tol.max_ulp > 0 ? ulp_err / *tol.max_ulp : (ulp_err > 0 ? INFINITY : 0));
        ok = ok && ulp_err <= *tol.max_ulp;
      }
      pa.err2 += (g - e) * (g - e);
      pa.ref2 += e * e;
      pa.max_abs = std::max(pa.max_abs, abs_err);
      if (std::isfinite(rel_err)) pa.max_rel = std::max(pa.max_rel, rel_err);
    }
    if (!ok) ++pa.failed;
    if (excess > 0 && (pa.worst.size() < kWorstShown || excess > pa.worst.back().excess))
      keep_worst(pa.worst, ElementError{i, unflatten(i, got.shape), e, g, abs_err, rel_err, ulp_err, excess});
  };

  // The stretches: whole rows when sampled, else fixed 64 Ki-element blocks of the flat output.
  std::vector<std::pair<int64_t, int64_t>> spans;  // [begin, end)
  if (rows.empty()) {
    constexpr int64_t kBlock = int64_t{1} << 16;
    for (int64_t b = 0; b < n; b += kBlock) spans.emplace_back(b, std::min(n, b + kBlock));
  } else {
    for (int64_t r : rows) spans.emplace_back(std::min(n, r * row_len), std::min(n, (r + 1) * row_len));
  }
  std::vector<Partial> parts(spans.size());
#pragma omp parallel for schedule(dynamic) if (n > (int64_t{1} << 18))
  for (size_t k = 0; k < spans.size(); ++k) {
    Partial local;  // on this thread's stack: neighbouring parts[] entries share cache lines
    for (int64_t i = spans[k].first; i < spans[k].second; ++i) check(i, local);
    parts[k] = std::move(local);
  }
  double err2 = 0, ref2 = 0;
  for (auto& pa : parts) {
    v.checked += pa.checked;
    v.unwritten += pa.unwritten;
    v.failed += pa.failed;
    v.max_abs_err = std::max(v.max_abs_err, pa.max_abs);
    v.max_rel_err = std::max(v.max_rel_err, pa.max_rel);
    v.max_ulp_err = std::max(v.max_ulp_err, pa.max_ulp);
    err2 += pa.err2;
    ref2 += pa.ref2;
    for (auto& w : pa.worst) keep_worst(v.worst, std::move(w));
  }
  v.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);

  const std::string tol_text = describe_tolerance(tol);
  if (v.unwritten > 0) {
    v.failure = Reason::unwritten;
    v.message = fmt::format("output {}: {} of {} checked elements were not written (they still hold the poison "
                            "pattern kbench stores before every call)", spec.name, v.unwritten, v.checked);
  } else if (v.failed > 0) {
    const bool nonfinite = !v.worst.empty() && !std::isfinite(v.worst.front().got);
    v.failure = nonfinite ? Reason::nan : Reason::mismatch;
    v.message = fmt::format("output {}: {} of {} checked elements outside tolerance ({}); max abs err {:.3g}, "
                            "max rel err {:.3g}, max ulp err {:.3g}",
                            spec.name, v.failed, v.checked, tol_text, v.max_abs_err, v.max_rel_err, v.max_ulp_err);
  } else if (tol.rel_l2 && v.rel_l2 > *tol.rel_l2) {
    v.failure = Reason::rel_l2;
    v.message = fmt::format("output {}: relative L2 error {:.3g} exceeds rel_l2={:g}", spec.name, v.rel_l2, *tol.rel_l2);
  }
  v.pass = v.failure == Reason::none;
  if (!v.pass && !v.worst.empty()) {
    v.message += "\n    worst elements:";
    for (const auto& w : v.worst) {
      if (w.excess <= 0) continue;
      v.message += fmt::format("\n      at {:<16} expected {:<14.8g} got {:<14.8g} abs err {:.3g}  rel err {:.3g}",
                               coords_string(w.coords), w.expected, w.got, w.abs_err, w.rel_err);
      if (float_out && std::isfinite(w.ulp_err)) v.message += fmt::format("  ulp {:.1f}", w.ulp_err);
    }
  }
  return v;
}

nlohmann::json to_json(const OutputVerdict& v) {
  nlohmann::json worst = nlohmann::json::array();
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(fmt::format("{}", x)); };
  for (const auto& w : v.worst)
    worst.push_back({{"index", w.coords}, {"expected", num(w.expected)}, {"got", num(w.got)},
                     {"abs_err", num(w.abs_err)}, {"rel_err", num(w.rel_err)}, {"ulp_err", num(w.ulp_err)}});
  return {{"output", v.output}, {"pass", v.pass}, {"failure", reason_name(v.failure)}, {"checked", v.checked},
          {"failed", v.failed}, {"unwritten", v.unwritten}, {"max_abs_err", num(v.max_abs_err)},
          {"max_rel_err", num(v.max_rel_err)}, {"max_ulp_err", num(v.max_ulp_err)}, {"rel_l2", num(v.rel_l2)},
          {"worst", worst}, {"message", v.message}};
}

std::vector<Evidence> output_evidence(const OutputVerdict& v, const std::string& note) {
  std::vector<Evidence> out;
  for (const auto& w : v.worst) {
    std::string at;
    for (auto x : w.coords) at += (at.empty() ? "" : ", ") + std::to_string(x);
    out.push_back({"output", "", 0, "", fmt::format("{}[{}]: expected {}, got {}", v.output, at, w.expected, w.got), note});
  }
  if (out.empty() && !v.pass) out.push_back({"output", "", 0, "", v.message, note});
  return out;
}

}  // namespace kb
