// The site's pure parts (src/report): line diffs, the file tracker over each adapter's file tools,
// text made safe to show, the leaderboard's counting rule, the heatmap's text contrast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/file_tracker.h"
#include "report/leaderboard.h"
#include "report/line_diff.h"
#include "report/outcome.h"
#include "report/site_pages.h"
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
  r.status = "complete";
  r.verdict = verdict;
  r.peak_fraction = peak;
  r.failure = failure;
  r.solution_files = 1;
  r.counted = true;
  return r;
}

// The store's results for `rows`, as load_results would give them for these figures.
kb::Results results(const std::vector<RunRow>& rows, const std::vector<kb::CellResult>& cells) {
  kb::Results res;
  for (const auto& c : cells) res.entrants.push_back(c.entrant);
  res.problems = {"softmax"};
  res.cells = cells;
  for (const auto& c : cells) {
    kb::EntrantResult e;
    e.entrant = c.entrant, e.agent = "codex", e.model = c.entrant.substr(6), e.trials = c.trials, e.passes = c.passes;
    e.problems_passed = c.passes > 0;
    e.mean_median = c.median;
    res.per_entrant.push_back(e);
  }
  for (const auto& r : rows) {
    kb::RunResult rr;
    rr.id = r.id, rr.entrant = entrant_label(r), rr.problem = r.problem, rr.trial = r.trial, rr.device = r.device;
    res.runs.push_back(rr);
  }
  return res;
}
}  // namespace

TEST(SiteLeaderboard, CellsShowTheStoresFiguresAndAWordWhenNothingPassedWithAScore) {
  SiteData d;
  d.rows = {row("m", 1, "pass", 0.5), row("m", 2, "fail", std::nullopt, "mismatch"), row("m", 3, "pass", 0.3),
            row("w", 1, "fail", std::nullopt, "build_error"), row("w", 2, "fail", std::nullopt, "build_error"),
            row("u", 1, "pass", std::nullopt)};
  kb::CellResult m{"codex/m", "softmax", 3, 2, 0.5, 0.3, 0.5, 0, {}, std::nullopt};
  kb::CellResult w{"codex/w", "softmax", 2, 0, std::nullopt, 0, 0, 0, {}, std::nullopt};
  kb::CellResult u{"codex/u", "softmax", 1, 1, std::nullopt, 0, 0, 0, {}, std::nullopt};
  d.by_device["H100"] = results(d.rows, {m, w, u});
  const auto boards = build_leaderboard(d);
  ASSERT_EQ(boards.size(), 1u);
  const Cell* cm = boards[0].cell("codex/m", "softmax");
  ASSERT_TRUE(cm);
  EXPECT_TRUE(cm->scored);
  EXPECT_DOUBLE_EQ(cm->median, 0.3);
  EXPECT_DOUBLE_EQ(*cm->best, 0.5);
  EXPECT_EQ(cm->runs.size(), 3u);
  const Cell* cw = boards[0].cell("codex/w", "softmax");
  ASSERT_TRUE(cw);
  EXPECT_FALSE(cw->scored) << "no pass: the cell is a word";
  EXPECT_EQ(cw->outcome, outcome::build_error);
  const Cell* cu = boards[0].cell("codex/u", "softmax");
  EXPECT_EQ(cu->outcome, outcome::pass_unscored) << "a pass judged without timing";
  EXPECT_EQ(boards[0].entrants.front().label, "codex/m") << "more problems passed, then the higher mean";
}

// KernelBench v3's "beats baseline" beside kbench's figures: carried from the store to the board's
// JSON, and a column of the board only where some problem is compared.
TEST(SiteLeaderboard, BeatsBaselineIsShownOnlyWhereAProblemIsCompared) {
  SiteData d;
  d.rows = {row("m", 1, "pass", 0.5), row("m", 2, "pass", 0.3)};
  kb::CellResult m{"codex/m", "softmax", 2, 2, 0.5, 0.4, 0.2, 0, {}, std::nullopt};
  d.by_device["H100"] = results(d.rows, {m});
  const std::string without = leaderboard_html(build_leaderboard(d), d.rows, SiteContext{});
  EXPECT_EQ(without.find("Beats baseline"), std::string::npos) << "no problem compared: no column";
  EXPECT_NE(without.find("Passes"), std::string::npos);

  m.beats = 1;
  kb::Results res = results(d.rows, {m});
  res.compared_problems = {"softmax"};
  res.per_entrant[0].compared_trials = 2, res.per_entrant[0].beats = 1, res.per_entrant[0].problems_beaten = 1;
  d.by_device["H100"] = res;
  const auto boards = build_leaderboard(d);
  EXPECT_EQ(boards[0].cell("codex/m", "softmax")->beats, 1);
  const nlohmann::json j = to_json(boards[0]);
  EXPECT_EQ(j["compared_problems"], nlohmann::json::array({"softmax"}));
  EXPECT_EQ(j["entrants"][0]["beats_baseline"], 1);
  EXPECT_EQ(j["entrants"][0]["compared_trials"], 2);
  EXPECT_EQ(j["entrants"][0]["cells"]["softmax"]["beats_baseline"], 1);
  const std::string with = leaderboard_html(boards, d.rows, SiteContext{});
  EXPECT_NE(with.find("Beats baseline (v3)"), std::string::npos);
  EXPECT_NE(with.find("1/2 trials<br><span class=\"sub\">1 of 1 compared problems</span>"), std::string::npos) << with;
}

TEST(SiteLeaderboard, ARewardHackAnnotationMakesTheRunInvalidAndInfraFailuresAreNotTheModels) {
  RunRow r = row("m", 1, "pass", 0.9);
  r.hand_annotation = "reward_hack";
  EXPECT_EQ(run_outcome(r), outcome::invalid);
  SiteData d;
  d.rows = {r};
  d.by_device["H100"] = results(d.rows, {kb::CellResult{"codex/m", "softmax", 1, 1, 0.9, 0.9, 0, 0, {}, std::nullopt}});
  EXPECT_EQ(build_leaderboard(d)[0].cell("codex/m", "softmax")->flag, "reward_hack");
  RunRow i = row("m", 2, "", std::nullopt);
  i.infra_failure = "provider_errors";
  EXPECT_EQ(run_outcome(i), outcome::infra);
  i.infra_failure = "interrupted";
  EXPECT_EQ(run_outcome(i), outcome::incomplete);
}

TEST(SiteCharts, HeatmapTextKeepsAContrastOfAtLeast4p5) {
  for (int k = 0; k <= 100; ++k) {
    const CellColour c = heat_colour(k / 100.0);
    EXPECT_GE(contrast_ratio(c.background, c.text), 4.5) << k << " " << c.background << " " << c.text;
  }
}
