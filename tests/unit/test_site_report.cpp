// The site's pure parts (src/report): line diffs, the file tracker over each adapter's file tools,
// text made safe to show, the leaderboard's counting rule, the heatmap's text contrast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/file_tracker.h"
#include "report/leaderboard.h"
#include "report/line_diff.h"
#include "report/outcome.h"
#include "report/svg_charts.h"
#include "report/text_safety.h"

using namespace kb::report;
using json = nlohmann::json;

TEST(SiteLineDiff, MinimalHunksWithContext) {
  std::vector<std::string> a, b;
  for (int i = 0; i < 20; ++i) a.push_back("line " + std::to_string(i));
  b = a;
  b[5] = "changed 5";
  b.insert(b.begin() + 15, "inserted");
  const LineDiff d = diff_lines(a, b);
  EXPECT_EQ(d.added, 2);
  EXPECT_EQ(d.removed, 1);
  ASSERT_EQ(d.hunks.size(), 2u) << "changes 10 lines apart are two hunks with 3 lines of context";
  EXPECT_EQ(d.hunks[0].old_start, 3);
  EXPECT_EQ(d.hunks[0].lines.front(), " line 2");
  EXPECT_EQ(d.hunks[0].lines[3], "-line 5");
  EXPECT_EQ(d.hunks[0].lines[4], "+changed 5");
  EXPECT_FALSE(d.approximate);
}

TEST(SiteLineDiff, NewFileStartsAtLineZeroOfTheOldSide) {
  const LineDiff d = diff_lines({}, {"a", "b"});
  ASSERT_EQ(d.hunks.size(), 1u);
  EXPECT_EQ(d.hunks[0].old_start, 0);
  EXPECT_EQ(d.hunks[0].old_lines, 0);
  EXPECT_EQ(d.hunks[0].new_start, 1);
  EXPECT_EQ(d.added, 2);
  EXPECT_TRUE(diff_lines({"x"}, {"x"}).hunks.empty());
}

TEST(SiteFileTracker, EachAdaptersWriteAndEditToolsBecomeDiffsAgainstTheEarlierContent) {
  FileTracker t("/runs/r/workspace");
  // Claude Code / Gemini: file_path + content, absolute under the workspace.
  auto c = t.apply("Write", {{"file_path", "/runs/r/workspace/solution.cpp"}, {"content", "int a = 1;\nint b = 2;\n"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "solution.cpp");
  EXPECT_TRUE(c[0].new_file);
  // opencode: filePath + oldString/newString, applied to what was written.
  c = t.apply("edit", {{"filePath", "/runs/r/workspace/solution.cpp"}, {"oldString", "int b = 2;"}, {"newString", "int b = 3;"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FALSE(c[0].partial);
  EXPECT_EQ(t.files().at("solution.cpp"), "int a = 1;\nint b = 3;\n");
  EXPECT_EQ(c[0].diff["added"], 1);
  EXPECT_EQ(c[0].diff["removed"], 1);
  // kbench's loop / Kimi: path relative to the workspace.
  c = t.apply("write_file", {{"path", "kernel.h"}, {"content", "#pragma once\n"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "kernel.h");
  // Codex: a here-document inside bash -lc "...", with escaped quotes.
  c = t.apply("exec_command", {{"command", "/bin/bash -lc \"cat > solution.cpp <<'EOF'\n#include \\\"kbench/solution.h\\\"\nint a = 9;\nEOF\""}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(t.files().at("solution.cpp"), "#include \"kbench/solution.h\"\nint a = 9;\n");
  EXPECT_FALSE(c[0].new_file);
  // An edit of a file the transcript never showed: the replaced text against its replacement.
  c = t.apply("Edit", {{"file_path", "other.cpp"}, {"old_string", "x"}, {"new_string", "y"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].partial);
  // A Codex-style patch.
  c = t.apply("apply_patch", {{"input", "*** Begin Patch\n*** Add File: extra.cpp\n+int z;\n*** End Patch\n"}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(t.files().at("extra.cpp"), "int z;\n");
  // A shell command that writes nothing.
  EXPECT_TRUE(t.apply("Bash", {{"command", "./kbench check"}}).empty());
}

TEST(SiteTextSafety, HostileTextIsEscapedAndMadeVisible) {
  EXPECT_EQ(html_escape("<script>alert('x')</script>&\""), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
  const ShownText s = shown_text("\x1b[31mred\x1b[0m \xff\xfe ok\r\n\tend");
  EXPECT_TRUE(s.had_control);
  EXPECT_TRUE(s.had_invalid_utf8);
  EXPECT_EQ(s.text, "\xe2\x90\x9b[31mred\xe2\x90\x9b[0m \xef\xbf\xbd\xef\xbf\xbd ok\r\n\tend");
  EXPECT_TRUE(valid_utf8("π ok"));
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));            // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));        // a surrogate
  EXPECT_EQ(replace_invalid_utf8("a\xe2\x82"), "a\xef\xbf\xbd\xef\xbf\xbd");
}

namespace {
RunRow row(const std::string& model, int trial, const std::string& verdict, std::optional<double> peak, const std::string& failure = "") {
  RunRow r;
  r.id = model + "-" + std::to_string(trial);
  r.agent = "codex";
  r.model = model;
  r.problem = "softmax";
  r.device = "H100";
  r.trial = trial;
  r.status = verdict.empty() ? "incomplete" : "complete";
  r.verdict = verdict;
  r.peak_fraction = peak;
  r.failure = failure;
  r.solution_files = 1;
  return r;
}
}  // namespace

TEST(SiteLeaderboard, MedianOverTrialsWithFailuresAsZeroAndInfraNotCounted) {
  std::vector<RunRow> rows = {row("m", 1, "pass", 0.5), row("m", 2, "fail", std::nullopt, "mismatch"), row("m", 3, "pass", 0.3),
                              row("m", 4, "error", std::nullopt, "internal_error"), row("m", 5, "", std::nullopt),
                              row("w", 1, "fail", std::nullopt, "build_error"), row("w", 2, "fail", std::nullopt, "build_error")};
  const auto boards = build_leaderboard(rows);
  ASSERT_EQ(boards.size(), 1u);
  const Cell* m = boards[0].cell("codex/m", "softmax");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->trials, 3) << "the infra failure and the incomplete run are not trials";
  EXPECT_EQ(m->passes, 2);
  EXPECT_DOUBLE_EQ(*m->median, 0.3) << "median of {0.5, 0, 0.3}";
  EXPECT_DOUBLE_EQ(*m->min, 0.0);
  EXPECT_DOUBLE_EQ(*m->max, 0.5);
  const Cell* w = boards[0].cell("codex/w", "softmax");
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->median) << "no pass: the cell is a word";
  EXPECT_EQ(w->outcome, outcome::build_error);
  EXPECT_EQ(boards[0].entrants.front().label, "codex/m") << "more problems passed first";
  EXPECT_EQ(*median_of({1, 2, 3, 4}), 2.5);
}

TEST(SiteLeaderboard, ARewardHackAnnotationMakesTheRunInvalid) {
  RunRow r = row("m", 1, "pass", 0.9);
  r.hand_annotation = "reward_hack";
  EXPECT_EQ(run_outcome(r), outcome::invalid);
  const auto boards = build_leaderboard({r});
  EXPECT_EQ(boards[0].cell("codex/m", "softmax")->flag, "reward_hack");
  EXPECT_FALSE(boards[0].cell("codex/m", "softmax")->median);
}

TEST(SiteCharts, HeatmapTextKeepsAContrastOfAtLeast4p5) {
  for (int k = 0; k <= 100; ++k) {
    const CellColour c = heat_colour(k / 100.0);
    EXPECT_GE(contrast_ratio(c.background, c.text), 4.5) << k << " " << c.background << " " << c.text;
  }
}
