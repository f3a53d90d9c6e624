// KernelBench v3's levels on the command line: `kbench list --level`, `kbench show`, a sweep by
// level, and the limits a level gives `kbench run` and `kbench prepare` (recorded in run.json).
// The deck has no levelled problem yet, so the tests make one: softmax with `level = 1` in a deck
// folder of their own, beside KernelBench-Hard's topk, which has none.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "scratch_dir.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using kb::test::kbench;

const fs::path kSource = KBENCH_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// `text` with its one `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// deck/softmax (the whole folder, deck "v3", level 1), deck/lv2 (softmax's problem.toml renamed,
// level 2: enough to be listed) and deck/topk (as it is: deck "hard", no level).
fs::path levelled_deck(const fs::path& root) {
  const fs::path deck = root / "deck";
  fs::create_directories(deck);
  fs::copy(kSource / "problems/softmax", deck / "softmax", fs::copy_options::recursive);
  const std::string toml = slurp(kSource / "problems/softmax/problem.toml");
  std::ofstream(deck / "softmax/problem.toml", std::ios::trunc) << replaced(toml, "deck = \"example\"\n", "deck = \"v3\"\nlevel = 1\n");
  fs::create_directories(deck / "lv2");
  std::ofstream(deck / "lv2/problem.toml")
      << replaced(replaced(toml, "deck = \"example\"\n", "deck = \"v3\"\nlevel = 2\n"), "name = \"softmax\"", "name = \"lv2\"");
  fs::create_directories(deck / "topk");
  fs::copy_file(kSource / "problems/topk/problem.toml", deck / "topk/problem.toml");
  return deck;
}

std::vector<std::string> names(const json& listing) {
  std::vector<std::string> out;
  for (const auto& p : listing) out.push_back(p["name"]);
  return out;
}

}  // namespace

TEST(Levels, ListShowsDeckAndLevelAndJsonHasNullForNone) {
  auto r = kbench({"list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string header = r.output.substr(0, r.output.find('\n'));
  EXPECT_NE(header.find("deck"), std::string::npos) << header;
  EXPECT_NE(header.find("level"), std::string::npos) << header;
  // KernelBench-Hard's problems: deck "hard", no level ("-").
  const size_t row = r.output.find("\ntopk ");
  ASSERT_NE(row, std::string::npos) << r.output;
  const std::string topk = r.output.substr(row + 1, r.output.find('\n', row + 1) - row - 1);
  EXPECT_NE(topk.find(" hard "), std::string::npos) << topk;
  EXPECT_NE(topk.find(" - "), std::string::npos) << topk;
  // The columns line up however long a name is (v3's level-2 names are twice the old column's
  // width): every row's deck starts where the header's "deck" does, after at least one space.
  const size_t deck_col = header.find("deck");
  std::istringstream rows(r.output.substr(r.output.find('\n') + 1));
  for (std::string line; std::getline(rows, line);) {
    if (line.empty()) continue;
    ASSERT_GT(line.size(), deck_col) << line;
    EXPECT_EQ(line[deck_col - 1], ' ') << line;
    EXPECT_NE(line[deck_col], ' ') << "the deck column of this row is not where the header's is:\n" << header << "\n" << line;
  }

  auto j = kbench({"list", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  for (const auto& p : json::parse(j.output)) {
    ASSERT_TRUE(p.contains("level")) << p["name"];
    if (p["name"] == "topk") {
      EXPECT_TRUE(p["level"].is_null());
      EXPECT_EQ(p["deck"], "hard");
    }
  }
}

TEST(Levels, ListFiltersByLevelAndDeck) {
  const fs::path root = kb::test::scratch_dir("levels-list");
  const std::string deck = levelled_deck(root).string();
  auto list = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"list", "--json", "--problems", deck});
    auto r = kbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? json::parse(r.output) : json::array();
  };
  EXPECT_EQ(names(list({})), (std::vector<std::string>{"lv2", "softmax", "topk"}));
  const json one = list({"--level", "1"});
  EXPECT_EQ(names(one), (std::vector<std::string>{"softmax"}));
  EXPECT_EQ(one[0]["level"], 1);
  EXPECT_EQ(one[0]["deck"], "v3");
  EXPECT_EQ(names(list({"--level", "1,2"})), (std::vector<std::string>{"lv2", "softmax"}));
  EXPECT_EQ(names(list({"--level", "2", "--level", "1"})), (std::vector<std::string>{"lv2", "softmax"}));
  EXPECT_TRUE(list({"--level", "3"}).empty()) << "no problem of level 3: an empty listing, not an error";
  EXPECT_EQ(names(list({"--deck", "hard"})), (std::vector<std::string>{"topk"}));
  EXPECT_TRUE(list({"--deck", "hard", "--level", "1"}).empty()) << "both filters must hold";

  auto text = kbench({"list", "--problems", deck, "--level", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("lv2 "), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("softmax "), std::string::npos) << text.output;
  fs::remove_all(root);
}

TEST(Levels, ListRefusesALevelOutsideOneToFour) {
  for (const char* bad : {"0", "5", "7", "one", "1.5"}) {
    auto r = kbench({"list", "--level", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("--level"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(bad), std::string::npos) << r.output;
  }
}

TEST(Levels, ShowPrintsTheLevelAndTheLimitsItBrings) {
  const fs::path root = kb::test::scratch_dir("levels-show");
  const std::string deck = levelled_deck(root).string();
  auto r = kbench({"show", "softmax", "--problems", deck});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("deck v3, level 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("budget 15 min"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10 turns"), std::string::npos) << r.output;
  auto hard = kbench({"show", "topk", "--problems", deck});
  ASSERT_EQ(hard.exit_code, 0) << hard.output;
  EXPECT_NE(hard.output.find("deck hard, no level"), std::string::npos) << hard.output;
  auto j = kbench({"show", "softmax", "--problems", deck, "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  EXPECT_EQ(json::parse(j.output)["level"], 1);
  fs::remove_all(root);
}

TEST(Levels, ABadLevelInProblemTomlNamesTheFileTheFieldAndTheValue) {
  const fs::path root = kb::test::scratch_dir("levels-bad");
  const fs::path deck = levelled_deck(root);
  const std::string toml = slurp(deck / "softmax/problem.toml");
  for (const auto& [value, found] : std::vector<std::pair<std::string, std::string>>{{"7", "found an integer (7)"},
                                                                                     {"\"one\"", "found a string (\"one\")"}}) {
    std::ofstream(deck / "softmax/problem.toml", std::ios::trunc) << replaced(toml, "level = 1\n", "level = " + value + "\n");
    auto r = kbench({"show", "softmax", "--problems", deck.string()});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find((deck / "softmax/problem.toml").string()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(": level: expected KernelBench v3's level, an integer from 1 to 4"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(found), std::string::npos) << r.output;
  }
  fs::remove_all(root);
}

TEST(Levels, SweepSelectsByLevelAndBudgetsByLevel) {
  const fs::path root = kb::test::scratch_dir("levels-sweep");
  const std::string deck = levelled_deck(root).string();
  const std::string entrant = "[[entrants]]\nagent = \"generic\"\nmodel = \"m\"\nallow_unpriced = true\ncommand = \"true\"\n";
  std::ofstream(root / "l1.toml") << "levels = [1]\ntarget = \"host\"\n" << entrant;
  auto r = kbench({"sweep", (root / "l1.toml").string(), "--dry-run", "--json", "--problems", deck});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json plan = json::parse(r.output);
  ASSERT_EQ(plan["cells"].size(), 1u) << plan.dump(2);
  EXPECT_EQ(plan["cells"][0]["problem"], "softmax");
  EXPECT_EQ(plan["spec"]["level_budget_seconds"]["softmax"], 900.0) << "level 1: 15 minutes without a budget";
  // 15 minutes + 10 s grace + 10 minutes of judging.
  EXPECT_EQ(plan["cell_seconds_max"], 900.0 + 10 + 600);

  std::ofstream(root / "given.toml") << "levels = [1]\ntarget = \"host\"\nbudget = \"5m\"\n" << entrant;
  auto given = kbench({"sweep", (root / "given.toml").string(), "--dry-run", "--json", "--problems", deck});
  ASSERT_EQ(given.exit_code, 0) << given.output;
  EXPECT_FALSE(json::parse(given.output)["spec"].contains("level_budget_seconds")) << "a given budget wins";

  auto flag = kbench({"sweep", (root / "l1.toml").string(), "--dry-run", "--json", "--problems", deck, "--level", "2", "--deck", "hard"});
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  const json flagged = json::parse(flag.output);
  std::vector<std::string> problems;
  for (const auto& c : flagged["cells"]) problems.push_back(c["problem"]);
  EXPECT_EQ(problems, (std::vector<std::string>{"lv2", "topk"})) << "--level and --deck replace the file's selection";

  auto bad = kbench({"sweep", (root / "l1.toml").string(), "--dry-run", "--problems", deck, "--level", "9"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--level"), std::string::npos) << bad.output;
  std::ofstream(root / "bad.toml") << "levels = [\"hard\"]\n" << entrant;
  auto old = kbench({"sweep", (root / "bad.toml").string(), "--dry-run", "--problems", deck});
  EXPECT_EQ(old.exit_code, 2) << old.output;
  EXPECT_NE(old.output.find("bad.toml:1:"), std::string::npos) << old.output;
  EXPECT_NE(old.output.find("decks = [\"hard\"]"), std::string::npos) << old.output;
  fs::remove_all(root);
}

// run.json's "limits" says which limits applied and where they came from; an agent command that
// cannot start keeps the run short (its starter solution is still judged, check only).
TEST(Levels, RunTakesTheLevelsBudgetUnlessGivenAndRecordsWhere) {
  const fs::path root = kb::test::scratch_dir("levels-run");
  const std::string deck = levelled_deck(root).string();
  auto run = [&](const std::string& runs, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--agent", "generic", "--model", "m", "--problem", "softmax", "--target", "host",
                                     "--check-only", "--no-sandbox", "--runs-dir", (root / runs).string(), "--command",
                                     "kbench-no-such-agent-command"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = kbench(args, std::chrono::minutes(5));
    EXPECT_NE(r.exit_code, 2) << r.output;
    for (const auto& e : fs::directory_iterator(root / runs)) return json::parse(slurp(e.path() / "run.json"));
    return json();
  };
  const json level = run("runs-level", {"--problems", deck});
  EXPECT_EQ(level["budget_seconds"], 900.0) << level.dump(2);
  EXPECT_EQ(level["limits"]["budget_seconds"], 900.0);
  EXPECT_EQ(level["limits"]["budget_from"], "level");
  EXPECT_EQ(level["limits"]["level"], 1);
  EXPECT_TRUE(level["limits"]["max_turns"].is_null()) << "a generic agent's turns are not kbench's to count";

  const json given = run("runs-given", {"--problems", deck, "--budget", "2m"});
  EXPECT_EQ(given["limits"]["budget_seconds"], 120.0);
  EXPECT_EQ(given["limits"]["budget_from"], "option");

  const json plain = run("runs-plain", {});  // the source tree's softmax: no level
  EXPECT_EQ(plain["limits"]["budget_seconds"], 2700.0);
  EXPECT_EQ(plain["limits"]["budget_from"], "default");
  EXPECT_TRUE(plain["limits"]["level"].is_null());
  fs::remove_all(root);
}

TEST(Levels, PrepareTellsTheAgentTheLevelsBudget) {
  const fs::path root = kb::test::scratch_dir("levels-prepare");
  const std::string deck = levelled_deck(root).string();
  auto r = kbench({"prepare", "softmax", (root / "ws").string(), "--target", "host", "--problems", deck});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string prompt = slurp(root / "ws/prompt.md");
  EXPECT_NE(prompt.find("15 minutes"), std::string::npos) << prompt;
  auto given = kbench({"prepare", "softmax", (root / "ws2").string(), "--target", "host", "--problems", deck, "--budget", "1h"});
  ASSERT_EQ(given.exit_code, 0) << given.output;
  EXPECT_EQ(slurp(root / "ws2/prompt.md").find("15 minutes"), std::string::npos);
  fs::remove_all(root);
}
