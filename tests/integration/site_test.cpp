// `kbench site build` over real run directories: runs made by `kbench run` in this test (a
// scripted generic agent with a full evaluation, kbench's own loop and every real agent CLI that
// is installed, each against the replay gateway), plus copies of them broken the ways real run
// folders break (a truncated events file, an unknown adapter, a missing result.json, hostile text
// in the transcript and the run's names, a 20 MB transcript) and one with a hand annotation. The
// site built from them is checked here (files, escaping, leaderboard numbers, incremental
// rebuilds) and then in a real headless Chromium (tests/site/browser_test.js).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/sandbox.h"
#include "agent_test_util.h"
#include "core/subprocess.h"
#include "report/site_tools.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

CommandResult kbench(std::vector<std::string> args, std::chrono::seconds limit = std::chrono::seconds(360)) {
  args.insert(args.begin(), KBENCH_BINARY);
  return run_command(args, limit);
}

json read_json(const fs::path& p) { return json::parse(kbtest::slurp(p)); }

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

// The one run directory under `runs` whose name contains `needle`.
fs::path run_named(const fs::path& runs, const std::string& needle) {
  for (const auto& e : fs::directory_iterator(runs))
    if (e.path().filename().string().find(needle) != std::string::npos) return e.path();
  return {};
}

// A copy of run `from` under a new name, with run.json's fields changed by `edit`.
fs::path copy_run(const fs::path& from, const std::string& name, const std::function<void(json&)>& edit) {
  const fs::path to = from.parent_path() / name;
  fs::copy(from, to, fs::copy_options::recursive);
  json rec = read_json(to / "run.json");
  edit(rec);
  write_text(to / "run.json", rec.dump(2));
  return to;
}

// The shared folder goes when every test is done (the screenshots are kept in the build folder).
struct RemoveFixture : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    if (!fixture_root().empty()) fs::remove_all(fixture_root(), ec);
  }
  static fs::path& fixture_root() {
    static fs::path p;
    return p;
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveFixture = ::testing::AddGlobalTestEnvironment(new RemoveFixture);

// The folder of everything the suite shares: made once, by the first test that needs it.
struct Fixture {
  fs::path root, runs, site;
  std::vector<std::string> agents_run, agents_skipped;
  std::string error;
};

Fixture& fixture() {
  static Fixture f = [] {
    Fixture f;
    f.root = kbtest::scratch("site");
    f.runs = f.root / "runs";
    f.site = f.root / "site";
    RemoveFixture::fixture_root() = f.root;
    if (!probe_sandbox().ok) {
      f.error = "no working sandbox: " + probe_sandbox().error;
      return f;
    }
    const fs::path kit = f.root / "kit";
    fs::create_directories(kit);
    fs::copy_file(kSource / "tests/fixtures/fake-agent-solve.sh", kit / "fake-agent-solve.sh");
    fs::copy_file(kSource / "problems/softmax/solutions/host-naive/solution.cpp", kit / "solution.cpp");
    // A full evaluation (timed: a peak fraction), by the generic adapter.
    auto r = kbench({"run", "--agent", "generic", "--model", "scripted", "--problem", "softmax", "--target", "host", "--budget", "3m",
                     "--runs-dir", f.runs.string(), "--ro-bind", kit.string(), "--command",
                     "sh " + (kit / "fake-agent-solve.sh").string() + " " + kit.string()});
    if (r.exit_code != 0) {
      f.error = "kbench run (generic) failed: " + r.output;
      return f;
    }
    // Every agent with a replay script, the way tests/integration/agents_test.cpp runs them;
    // kbench's own loop twice (a cell of two trials).
    struct A {
      const char* agent;
      const char* model;
      int trial;
    };
    for (const A a : {A{"kbench", "loop-test", 1}, A{"kbench", "loop-test", 2}, A{"claude-code", "claude-test", 1}, A{"codex", "gpt-test", 1},
                      A{"opencode", "oc-test", 1}, A{"gemini", "gemini-test", 1}, A{"kimi", "kimi-test", 1}}) {
      try {
        AdapterOptions o;
        o.kbench_binary = KBENCH_BINARY;
        (void)make_adapter(a.agent, o);
      } catch (const std::invalid_argument& e) {
        f.agents_skipped.push_back(std::string(a.agent) + ": " + e.what());
        continue;
      }
      const fs::path script = kSource / "tests/fixtures/agents" / (std::string(a.agent) + ".json");
      r = kbench({"run", "--agent", a.agent, "--model", a.model, "--problem", "softmax", "--target", "host", "--budget", "4m", "--check-only",
                  "--trial", std::to_string(a.trial), "--runs-dir", f.runs.string(), "--gateway", "replay:" + script.string()});
      if (r.exit_code != 0) {
        f.error = std::string("kbench run --agent ") + a.agent + " failed: " + r.output;
        return f;
      }
      if (a.trial == 1) f.agents_run.push_back(a.agent);
    }
    const fs::path loop = run_named(f.runs, "_kbench_loop-test_softmax_1");
    const fs::path generic = run_named(f.runs, "_generic_scripted_softmax_1");

    // Broken copies, the ways real run folders break.
    const fs::path truncated = copy_run(loop, "zz-truncated", [](json& r) { r["model"] = "truncated-events"; });
    {
      const std::string ev = kbtest::slurp(truncated / "transcript/events.jsonl");
      write_text(truncated / "transcript/events.jsonl", ev.substr(0, ev.size() - ev.size() / 3));
    }
    copy_run(loop, "zz-unknown-adapter", [](json& r) { r["agent"] = "mystery-cli"; });
    const fs::path missing = copy_run(loop, "zz-missing-result", [](json& r) { r["model"] = "no-result"; });
    fs::remove(missing / "result.json");
    const fs::path hostile = copy_run(loop, "zz-hostile", [](json& r) { r["model"] = "<script>alert('model')</script>"; });
    {
      std::string ev = kbtest::slurp(hostile / "transcript/events.jsonl");
      ev += json{{"kind", "assistant_text"}, {"text", "<script>alert('xss')</script><img src=x onerror=alert(2)> and \x1b[31mred\x1b[0m"}}.dump() + "\n";
      ev += std::string("{\"kind\":\"tool_result\",\"text\":\"bytes \xff\xfe not UTF-8\"}\n");
      ev += json{{"kind", "telepathy"}, {"text", "an event kind kbench does not know"}}.dump() + "\n";
      ev += "this line is not JSON at all <b>bold</b>\n";
      write_text(hostile / "transcript/events.jsonl", ev);
    }
    // A hand annotation quoting the solution's lines (a reward-hack verdict: the cell turns red).
    const fs::path annotated = copy_run(generic, "zz-annotated", [](json& r) { r["model"] = "annotated"; });
    write_text(annotated / "annotation.toml",
               "verdict = \"reward_hack\"\nsummary = \"A test annotation: the verdict is made up, the quote is real.\"\n"
               "implication = \"The cell is shown invalid.\"\n[[quotes]]\nfile = \"solution/solution.cpp\"\nlines = \"25-26\"\n"
               "label = \"the row maximum\"\ntext = \"\"\"\nfor (int64_t j = 0; j < s->vocab; ++j) mx = std::fmax(mx, xr[j]);\n"
               "float sum = 0.f;\n\"\"\"\n");
    // A 20 MB transcript: 4000 shell calls with 5 KB of output each, and a file rewritten every 100.
    const fs::path big = copy_run(loop, "zz-big-transcript", [](json& r) { r["model"] = "big-transcript"; });
    {
      std::ofstream out(big / "transcript/events.jsonl", std::ios::binary | std::ios::trunc);
      const std::string output(5000, 'x');
      for (int i = 0; i < 4000; ++i) {
        out << json{{"kind", "assistant_text"}, {"text", "Step " + std::to_string(i) + ": trying another tiling of the row loop."}}.dump() << "\n";
        if (i % 100 == 0)
          out << json{{"kind", "tool_call"}, {"tool", "write_file"}, {"call_id", "w" + std::to_string(i)},
                      {"input", {{"path", "solution.cpp"}, {"content", "// version " + std::to_string(i) + "\nint tile = " + std::to_string(i) + ";\n"}}}}
                     .dump()
              << "\n"
              << json{{"kind", "tool_result"}, {"call_id", "w" + std::to_string(i)}, {"text", "written"}}.dump() << "\n";
        out << json{{"kind", "tool_call"}, {"tool", "bash"}, {"call_id", "c" + std::to_string(i)}, {"input", {{"command", "./kbench check"}}}}.dump() << "\n";
        out << json{{"kind", "tool_result"}, {"call_id", "c" + std::to_string(i)}, {"text", output + "\nverdict FAIL"}}.dump() << "\n";
        out << json{{"kind", "usage"}, {"scope", "part"}, {"usage", {{"input_tokens", 1000 + i}, {"output_tokens", 50}}}}.dump() << "\n";
      }
    }
    r = kbench({"site", "build", "--runs", f.runs.string(), "--out", f.site.string(), "--json"});
    if (r.exit_code != 0) f.error = "kbench site build failed: " + r.output;
    return f;
  }();
  return f;
}

#define NEED_FIXTURE()                                         \
  Fixture& f = fixture();                                      \
  if (f.error.rfind("no working sandbox", 0) == 0) GTEST_SKIP() << f.error; \
  ASSERT_TRUE(f.error.empty()) << f.error

fs::path page_of(const Fixture& f, const std::string& dir_name) {
  std::string id = dir_name;
  for (auto& c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-')) c = '-';
  return f.site / "runs" / id / "index.html";
}

}  // namespace

TEST(Site, EveryRunHasAPageAndHostileTextIsEscaped) {
  NEED_FIXTURE();
  for (const auto& s : f.agents_skipped) {
    if (std::getenv("KBENCH_REQUIRE_AGENTS")) ADD_FAILURE() << s;
    std::cerr << "site test without agent " << s << "\n";
  }
  int runs = 0;
  for (const auto& e : fs::directory_iterator(f.runs)) {
    ++runs;
    EXPECT_TRUE(fs::is_regular_file(page_of(f, e.path().filename().string()))) << e.path();
  }
  const json lb = read_json(f.site / "data/leaderboard.json");
  EXPECT_EQ(lb["schema"], "kbench.site/1");
  EXPECT_EQ(lb["runs"].size(), static_cast<size_t>(runs));
  // Nothing from a run becomes markup: no page holds the hostile text unescaped.
  for (const auto& e : fs::recursive_directory_iterator(f.site)) {
    if (e.path().extension() != ".html") continue;
    const std::string html = kbtest::slurp(e.path());
    EXPECT_EQ(html.find("<script>alert"), std::string::npos) << e.path();
    EXPECT_EQ(html.find("<b>bold</b>"), std::string::npos) << e.path();
  }
  const std::string hostile = kbtest::slurp(page_of(f, "zz-hostile"));
  EXPECT_NE(hostile.find("&lt;script&gt;alert(&#39;model&#39;)&lt;/script&gt;"), std::string::npos) << "the model's name, escaped";
  EXPECT_NE(hostile.find("1 of unknown kind"), std::string::npos);
  EXPECT_NE(hostile.find("1 unreadable lines"), std::string::npos);
  EXPECT_NE(hostile.find("control characters or invalid UTF-8"), std::string::npos);
  // The timeline data marks what it changed: ESC shown as U+241B, bad bytes as U+FFFD.
  std::string chunks;
  for (const auto& e : fs::directory_iterator(page_of(f, "zz-hostile").parent_path()))
    if (e.path().filename().string().rfind("events-", 0) == 0) chunks += kbtest::slurp(e.path());
  EXPECT_NE(chunks.find("\xe2\x90\x9b[31mred"), std::string::npos);
  EXPECT_NE(chunks.find("\"invalid_utf8\""), std::string::npos);
  EXPECT_NE(chunks.find("\"control\""), std::string::npos);
  // Bad input is marked on its page.
  EXPECT_NE(kbtest::slurp(page_of(f, "zz-truncated")).find("The transcript is truncated"), std::string::npos);
  EXPECT_NE(kbtest::slurp(page_of(f, "zz-unknown-adapter")).find("unknown adapter &#39;mystery-cli&#39;"), std::string::npos);
  EXPECT_NE(kbtest::slurp(page_of(f, "zz-missing-result")).find("result.json is missing"), std::string::npos);
}

TEST(Site, LeaderboardCellsAreKbenchResultsNumbersFromRunsOrFromTheDatabase) {
  NEED_FIXTURE();
  const json lb = read_json(f.site / "data/leaderboard.json");
  ASSERT_EQ(lb["boards"].size(), 1u) << "one device kind: this machine's CPU";
  const json& board = lb["boards"][0];
  const fs::path generic = run_named(f.runs, "_generic_scripted_softmax_1");
  const double peak = read_json(generic / "result.json")["summary"]["peak_fraction_geomean"].get<double>();
  bool saw_generic = false, saw_loop = false, saw_annotated = false;
  for (const auto& e : board["entrants"]) {
    const json& c = e["cells"]["softmax"];
    if (e["label"] == "generic/scripted") {
      saw_generic = true;
      EXPECT_DOUBLE_EQ(c["median"].get<double>(), peak);
      EXPECT_EQ(c["n"], 1);
      EXPECT_TRUE(c["scored"].get<bool>());
    }
    if (e["label"] == "kbench/loop-test") {
      saw_loop = true;
      EXPECT_EQ(c["n"], 2) << "two trials";
      EXPECT_EQ(c["passes"], 2);
      EXPECT_FALSE(c["scored"].get<bool>()) << "check-only passes have no peak fraction";
      EXPECT_EQ(c["outcome"], "pass_unscored");
    }
    if (e["label"] == "generic/annotated") {
      saw_annotated = true;
      EXPECT_EQ(c["flag"], "reward_hack");
      EXPECT_TRUE(c["annotated"].get<bool>());
    }
  }
  EXPECT_TRUE(saw_generic && saw_loop && saw_annotated) << board.dump(1);
  EXPECT_NE(kbtest::slurp(f.site / "index.html").find(fmt::format(">{:.3f}<", peak)), std::string::npos) << "the cell prints its number";

  // The same runs through the results store: `kbench db rebuild`, then `kbench results --json`.
  const fs::path db = f.root / "results/kbench.db";
  auto r = kbench({"db", "rebuild", f.runs.string(), "--db", db.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = kbench({"results", db.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = json::parse(r.output.substr(r.output.find('{')));
  int compared = 0;
  for (const auto& c : results["cells"]) {
    const json* cell = nullptr;
    for (const auto& e : board["entrants"])
      if (e["label"] == c["entrant"] && e["cells"].contains(c["problem"].get<std::string>())) cell = &e["cells"][c["problem"].get<std::string>()];
    ASSERT_TRUE(cell) << "no leaderboard cell for " << c.dump();
    EXPECT_EQ((*cell)["n"], c["trials"]) << c.dump();
    EXPECT_EQ((*cell)["passes"], c["passes"]) << c.dump();
    EXPECT_DOUBLE_EQ((*cell)["median"].get<double>(), c["median_peak_fraction"].get<double>()) << c.dump();
    EXPECT_DOUBLE_EQ((*cell)["spread"].get<double>(), c["spread"].get<double>()) << c.dump();
    EXPECT_EQ((*cell)["best"], c["best_peak_fraction"]) << c.dump();
    ++compared;
  }
  EXPECT_GE(compared, 10) << results.dump(1);

  // And the site built from that database (--db) has the same boards and a page for every run.
  const fs::path out = f.root / "site-db";
  r = kbench({"site", "build", "--db", db.string(), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_json(out / "data/leaderboard.json")["boards"], lb["boards"]);
  for (const auto& e : fs::directory_iterator(f.runs)) {
    if (!fs::exists(e.path() / "run.json")) continue;
    EXPECT_TRUE(fs::exists(out / fs::relative(page_of(f, e.path().filename().string()), f.site))) << e.path();
  }
  r = kbench({"site", "build", "--db", (f.root / "no-such.db").string(), "--out", (f.root / "site-none").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no-such.db"), std::string::npos) << r.output;
}

TEST(Site, RebuildsOnlyWhatChangedAndRemovesPagesOfRunsThatAreGone) {
  NEED_FIXTURE();
  // A separate output folder, so that the browser test keeps the full site.
  const fs::path out = f.root / "site-incremental";
  auto build = [&] {
    auto r = kbench({"site", "build", "--runs", f.runs.string(), "--out", out.string(), "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(r.output.substr(r.output.find('{')));
  };
  json first = build();
  EXPECT_EQ(first["runs_written"], first["runs"]);
  json again = build();
  EXPECT_EQ(again["runs_written"], 0) << again.dump();
  EXPECT_EQ(again["runs_unchanged"], again["runs"]);
  // A new hand annotation changes one run: only its page is rewritten.
  const fs::path loop = run_named(f.runs, "zz-unknown-adapter");
  write_text(loop / "annotation.toml", "verdict = \"clean\"\nsummary = \"Looked at it; fine.\"\n");
  json one = build();
  EXPECT_EQ(one["runs_written"], 1) << one.dump();
  EXPECT_NE(kbtest::slurp(page_of(f, "zz-unknown-adapter").string().replace(0, f.site.string().size(), out.string())).find("Looked at it; fine."),
            std::string::npos);
  // A run that is gone loses its page.
  const fs::path moved = f.root / "moved-away";
  fs::rename(loop, moved);
  json gone = build();
  EXPECT_EQ(gone["runs_removed"], 1) << gone.dump();
  EXPECT_FALSE(fs::exists(out / "runs/zz-unknown-adapter"));
  fs::rename(moved, loop);
  fs::remove(loop / "annotation.toml");
}

TEST(Site, BadUsageIsRefusedWithTheFolderNamed) {
  const fs::path out = kbtest::scratch("site-bad");
  auto r = kbench({"site", "build", "--runs", "/nonexistent/runs-folder", "--out", (out / "s").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/runs-folder"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out / "s")) << "nothing written for a refused build";
  fs::remove_all(out);
}

TEST(Site, ServeAnswersWithTheBuiltPages) {
  NEED_FIXTURE();
  // kbench site serve on a free loopback port, asked for two pages with curl, then stopped; every
  // step is bounded in time.
  const fs::path log = f.root / "serve.log";
  const std::string script =
      "'" + std::string(KBENCH_BINARY) + "' site serve --dir '" + f.site.string() + "' --port 0 > '" + log.string() + "' 2>&1 & pid=$!; "
      "for i in $(seq 50); do url=$(sed -n 's/^serving the site at \\([^ ]*\\).*/\\1/p' '" + log.string() + "'); "
      "[ -n \"$url\" ] && break; sleep 0.2; done; "
      "curl -sf --max-time 10 \"${url}index.html\" | grep -c 'kbench leaderboard'; "
      "curl -sf --max-time 10 \"${url}data/leaderboard.json\" | grep -c 'kbench.site/1'; "
      "curl -s -o /dev/null -w '%{http_code}\\n' --max-time 10 \"${url}../../etc/passwd\"; "
      "kill $pid; wait $pid 2>/dev/null; true";
  auto r = run_command({"sh", "-c", script}, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string index_hits, json_hits, outside;
  std::getline(lines, index_hits);
  std::getline(lines, json_hits);
  std::getline(lines, outside);
  EXPECT_NE(index_hits, "0") << r.output << kbtest::slurp(log);
  EXPECT_NE(index_hits, "") << r.output << kbtest::slurp(log);
  EXPECT_EQ(json_hits, "1") << r.output;
  EXPECT_NE(outside, "200") << "a path outside the site is not served: " << r.output;
}

// The site in a real browser: Debian's chromium driven by playwright-core (tests/site/browser_test.js).
TEST(Site, WorksInHeadlessChromium) {
  NEED_FIXTURE();
  const char* chromium_env = std::getenv("KBENCH_CHROMIUM");
  const fs::path chromium = chromium_env && *chromium_env ? fs::path(chromium_env) : fs::path("/usr/bin/chromium");
  const fs::path tools = report::site_tools_dir();
  std::string missing;
  if (!fs::exists(chromium)) missing = chromium.string() + " is not installed";
  else if (!fs::exists(tools / "node_modules/playwright-core")) missing = "no playwright-core in " + tools.string();
  else if (run_command({"node", "--version"}, std::chrono::seconds(30)).exit_code != 0) missing = "no node";
  if (!missing.empty()) {
    const std::string why = missing + " (scripts/setup --site installs chromium and the site tools)";
    if (std::getenv("KBENCH_REQUIRE_BROWSER")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const fs::path artefacts = fs::path(KBENCH_BINARY).parent_path() / "site-test-artefacts";
  fs::create_directories(artefacts);
  json cases = {{"site", f.site.string()},
                {"artefacts", artefacts.string()},
                {"tools", tools.string()},
                {"chromium", chromium.string()},
                {"agents", f.agents_run},
                {"pages",
                 {{"loop", page_of(f, run_named(f.runs, "_kbench_loop-test_softmax_1").filename().string()).string()},
                  {"annotated", page_of(f, "zz-annotated").string()},
                  {"hostile", page_of(f, "zz-hostile").string()},
                  {"truncated", page_of(f, "zz-truncated").string()},
                  {"unknown", page_of(f, "zz-unknown-adapter").string()},
                  {"missing", page_of(f, "zz-missing-result").string()},
                  {"big", page_of(f, "zz-big-transcript").string()}}}};
  json agent_pages = json::object();
  for (const auto& a : f.agents_run) agent_pages[a] = page_of(f, run_named(f.runs, "_" + a + "_").filename().string()).string();
  cases["agent_pages"] = agent_pages;
  write_text(f.root / "cases.json", cases.dump(2));
  auto r = run_command({"node", (kSource / "tests/site/browser_test.js").string(), (f.root / "cases.json").string()}, std::chrono::minutes(5));
  std::cerr << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
}
