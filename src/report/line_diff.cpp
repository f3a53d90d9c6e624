#include "report/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace kb::report {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

namespace {

enum class Op : char { same = ' ', del = '-', add = '+' };

// The edit script of a[lo_a, hi_a) -> b[lo_b, hi_b) by a longest common subsequence table.
void align(const std::vector<std::string>& a, const std::vector<std::string>& b, size_t lo_a, size_t hi_a, size_t lo_b,
           size_t hi_b, std::vector<Op>& ops, bool& approximate) {
  const size_t n = hi_a - lo_a, m = hi_b - lo_b;
  if (n * m > kMaxAlignedCells) {
    approximate = true;
    ops.insert(ops.end(), n, Op::del);
    ops.insert(ops.end(), m, Op::add);
    return;
  }
  // lcs[i][j]: LCS length of a[lo_a+i..] and b[lo_b+j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = a[lo_a + i] == b[lo_b + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[lo_a + i] == b[lo_b + j]) {
      ops.push_back(Op::same);
      ++i, ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ops.push_back(Op::del);
      ++i;
    } else {
      ops.push_back(Op::add);
      ++j;
    }
  }
  ops.insert(ops.end(), n - i, Op::del);
  ops.insert(ops.end(), m - j, Op::add);
}

}  // namespace

LineDiff diff_lines(const std::vector<std::string>& a, const std::vector<std::string>& b, int context) {
  LineDiff d;
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  std::vector<Op> ops(pre, Op::same);
  align(a, b, pre, a.size() - suf, pre, b.size() - suf, ops, d.approximate);
  ops.insert(ops.end(), suf, Op::same);

  // Walk the script; a hunk covers each run of changes with `context` lines around it, and runs
  // closer than 2*context apart share one hunk.
  const size_t total = ops.size();
  std::vector<size_t> ai(total + 1), bi(total + 1);  // line index in a and b before op k
  for (size_t k = 0, x = 0, y = 0; k <= total; ++k) {
    ai[k] = x, bi[k] = y;
    if (k < total) {
      if (ops[k] != Op::add) ++x;
      if (ops[k] != Op::del) ++y;
    }
  }
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  size_t k = 0;
  while (k < total) {
    while (k < total && ops[k] == Op::same) ++k;
    if (k == total) break;
    size_t start = k > ctx ? k - ctx : 0;
    size_t end = k;  // one past the last change of this hunk
    for (size_t q = k; q < total; ++q) {
      if (ops[q] != Op::same) {
        end = q + 1;
      } else if (q - end >= 2 * ctx) {
        break;
      }
    }
    const size_t stop = std::min(total, end + ctx);
    DiffHunk h;
    h.old_start = static_cast<int>(ai[start]) + 1;
    h.new_start = static_cast<int>(bi[start]) + 1;
    for (size_t q = start; q < stop; ++q) {
      const std::string& text = ops[q] == Op::add ? b[bi[q]] : a[ai[q]];
      h.lines.push_back(static_cast<char>(ops[q]) + text);
      if (ops[q] != Op::add) ++h.old_lines;
      if (ops[q] != Op::del) ++h.new_lines;
      if (ops[q] == Op::add) ++d.added;
      if (ops[q] == Op::del) ++d.removed;
    }
    // A unified diff numbers an empty side by the line before it ("@@ -0,0 +1,36 @@" for a new file).
    if (h.old_lines == 0) --h.old_start;
    if (h.new_lines == 0) --h.new_start;
    d.hunks.push_back(std::move(h));
    k = stop;
  }
  return d;
}

nlohmann::json to_json(const LineDiff& d) {
  nlohmann::json hunks = nlohmann::json::array();
  for (const auto& h : d.hunks)
    hunks.push_back({{"old_start", h.old_start}, {"old_lines", h.old_lines}, {"new_start", h.new_start},
                     {"new_lines", h.new_lines}, {"lines", h.lines}});
  return {{"added", d.added}, {"removed", d.removed}, {"approximate", d.approximate}, {"hunks", hunks}};
}

}  // namespace kb::report
