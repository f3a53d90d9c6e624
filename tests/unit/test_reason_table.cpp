// The one table of reasons (verdict/reason.h): complete, and what the documents say. Each reason
// has every column; docs/result-schema.md lists each with its verdict and exit code, docs/cli.md's
// exit-code table names the same codes, docs/annotations.md the same annotation verdicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "verdict/reason.h"

namespace fs = std::filesystem;

namespace {

using Cells = std::vector<std::string>;

std::string read_doc(const std::string& name) {
  std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / "docs" / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

// The body rows of the first Markdown table after the line `heading` (header and rule skipped).
std::vector<Cells> table_after(const std::string& doc, const std::string& heading) {
  std::vector<Cells> rows;
  std::istringstream in(doc);
  std::string line;
  bool seen = false, in_table = false;
  size_t header_lines = 0;
  while (std::getline(in, line)) {
    if (!seen) {
      seen = line == heading;
      continue;
    }
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (header_lines++ < 2) continue;  // the header and the |---| rule
    Cells cells;
    std::string cell;
    std::istringstream cs(line.substr(1));
    while (std::getline(cs, cell, '|')) cells.push_back(trim(cell));
    rows.push_back(cells);
  }
  return rows;
}

// Every `backticked` word of a cell.
std::vector<std::string> code_spans(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex span("`([^`]*)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), span), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

std::string names(const std::set<std::string>& s) {
  std::string out;
  for (const auto& n : s) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

TEST(ReasonTable, EveryReasonHasEveryColumn) {
  EXPECT_EQ(kb::reason_table_problems(kb::reason_rows()), std::vector<std::string>{});
  for (size_t i = 0; i < kb::kReasonCount; ++i) {
    const auto r = static_cast<kb::Reason>(i);
    EXPECT_EQ(kb::reason_row(r).reason, r);
    EXPECT_EQ(kb::parse_reason(kb::reason_name(r)), r) << kb::reason_name(r);
  }
  EXPECT_EQ(kb::parse_reason("something_new"), std::nullopt);
}

// The check itself fails on each kind of gap (it is what the compile-time assertion runs too).
TEST(ReasonTable, AnIncompleteTableIsRefused) {
  const auto rows = kb::reason_rows();
  auto problems_with = [&](auto change) {
    std::vector<kb::ReasonRow> copy(rows.begin(), rows.end());
    change(copy);
    return kb::reason_table_problems(copy);
  };
  auto mentions = [](const std::vector<std::string>& problems, const std::string& what) {
    for (const auto& p : problems)
      if (p.find(what) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t.pop_back(); }), "rows for"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { std::swap(t[3], t[4]); }), "not the row of reason 3"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t[5].name = ""; }), "no name"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t[5].meaning = ""; }), "no one-sentence meaning"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t[5].exit_code = kb::exit_code::usage; }), "does not fit verdict fail"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t[6].name = t[5].name; }), "used by an earlier row"));
  EXPECT_TRUE(mentions(problems_with([](auto& t) { t[0].name = "pass"; }), "no name"));
}

TEST(ReasonTable, VerdictNamesRoundTrip) {
  for (auto v : {kb::Verdict::pass, kb::Verdict::fail, kb::Verdict::error})
    EXPECT_EQ(kb::parse_verdict(kb::verdict_name(v)), v);
  EXPECT_EQ(kb::parse_verdict("PASS"), std::nullopt);
  EXPECT_EQ(kb::parse_verdict(""), std::nullopt);
}

// docs/result-schema.md: one line per reason, with the table's verdict and exit code.
TEST(ReasonTable, ResultSchemaListsEveryReasonAsTheTableDoes) {
  const auto doc = table_after(read_doc("result-schema.md"), "## Failure reasons");
  ASSERT_FALSE(doc.empty()) << "docs/result-schema.md has no table under '## Failure reasons'";
  std::set<std::string> documented;
  for (const auto& cells : doc) {
    ASSERT_EQ(cells.size(), 4u) << "expected | reason | verdict | exit code | meaning |: " << cells[0];
    const auto verdict = code_spans(cells[1]);
    for (const auto& name : code_spans(cells[0])) {
      const auto reason = kb::parse_reason(name);
      if (!reason || *reason == kb::Reason::none) {
        ADD_FAILURE() << "docs/result-schema.md lists `" << name << "`, which the reason table does not hold";
        continue;
      }
      const auto& row = kb::reason_row(*reason);
      EXPECT_TRUE(documented.insert(name).second) << name << " is listed twice";
      EXPECT_EQ(verdict, std::vector<std::string>{std::string(kb::verdict_name(row.verdict))}) << name;
      EXPECT_EQ(cells[2], std::to_string(row.exit_code)) << name;
      EXPECT_FALSE(cells[3].empty()) << name;
    }
  }
  std::set<std::string> missing;
  for (const auto& row : kb::reason_rows())
    if (row.reason != kb::Reason::none && !documented.count(std::string(row.name))) missing.insert(std::string(row.name));
  EXPECT_TRUE(missing.empty()) << "docs/result-schema.md does not list: " << names(missing);
}

// docs/cli.md: the exit-code table holds each code a reason can give, with its verdict, and names
// the reasons of the codes that not every reason of the verdict shares.
TEST(ReasonTable, CliExitCodesAreTheTables) {
  const auto doc = table_after(read_doc("cli.md"), "## Exit codes");
  ASSERT_FALSE(doc.empty()) << "docs/cli.md has no table under '## Exit codes'";
  std::map<int, std::string> verdict_of_code;
  std::map<int, std::set<std::string>> listed;
  for (const auto& cells : doc) {
    ASSERT_EQ(cells.size(), 3u) << "expected | code | meaning | a judged result |: " << cells[0];
    const int code = std::stoi(cells[0]);
    for (const auto& span : code_spans(cells[2])) {
      if (kb::parse_verdict(span) && !verdict_of_code.count(code)) verdict_of_code[code] = span;
      else if (auto r = kb::parse_reason(span); r && *r != kb::Reason::none) listed[code].insert(span);
      else ADD_FAILURE() << "docs/cli.md exit code " << code << " names `" << span << "`, neither a verdict nor a reason";
    }
  }
  std::map<int, std::set<std::string>> expected;
  for (const auto& row : kb::reason_rows()) {
    ASSERT_TRUE(verdict_of_code.count(row.exit_code)) << "docs/cli.md has no exit code " << row.exit_code << " (" << row.name << ")";
    EXPECT_EQ(verdict_of_code[row.exit_code], kb::verdict_name(row.verdict)) << row.name << ": exit code " << row.exit_code;
    expected[row.exit_code].insert(std::string(row.name));
  }
  // A code shared by all reasons of its verdict may leave them unnamed; one that is not must name
  // exactly its reasons.
  for (const auto& [code, reasons] : expected) {
    const std::string verdict = verdict_of_code[code];
    bool whole_verdict = true;
    for (const auto& row : kb::reason_rows())
      if (kb::verdict_name(row.verdict) == verdict && row.exit_code != code) whole_verdict = false;
    if (whole_verdict && listed[code].empty()) continue;
    std::set<std::string> want = reasons;
    want.erase("");
    EXPECT_EQ(names(listed[code]), names(want)) << "docs/cli.md, exit code " << code;
  }
}

// docs/annotations.md: each reason (a pass as "pass") once, with the table's annotation verdict and
// needs_review.
TEST(ReasonTable, AnnotationsDocMapsEveryReasonAsTheTableDoes) {
  const auto doc = table_after(read_doc("annotations.md"), "## The automatic mapping");
  ASSERT_FALSE(doc.empty());
  std::set<std::string> documented;
  for (const auto& cells : doc) {
    ASSERT_EQ(cells.size(), 4u) << cells[0];
    std::vector<std::string> reasons = code_spans(cells[0]);
    if (cells[0] == "pass") reasons = {""};
    const auto verdict = code_spans(cells[1]);
    for (const auto& name : reasons) {
      const auto reason = kb::parse_reason(name);
      if (!reason) {
        ADD_FAILURE() << "docs/annotations.md maps `" << name << "`, which the reason table does not hold";
        continue;
      }
      const auto& row = kb::reason_row(*reason);
      EXPECT_TRUE(documented.insert(name).second) << name << " is mapped twice";
      EXPECT_EQ(verdict, std::vector<std::string>{std::string(kb::annotation_verdict_name(row.annotation))}) << name;
      EXPECT_EQ(cells[2], row.needs_review ? "yes" : "no") << name;
    }
  }
  std::set<std::string> missing;
  for (const auto& row : kb::reason_rows())
    if (!documented.count(std::string(row.name))) missing.insert(row.name.empty() ? "pass" : std::string(row.name));
  EXPECT_TRUE(missing.empty()) << "docs/annotations.md does not map: " << names(missing);
}
