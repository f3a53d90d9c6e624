// Kits (target/solution_kit.h): the headers a problem's deck solutions share, in one place. A deck
// solution builds with its problem's kit and the deck's kit on the include path, in the sandbox,
// and a change to a kit header is never served a stale library; a copy of the same folder outside
// the deck (an agent's solution) gets no kit; no agent workspace holds a kit file; and no two deck
// solution folders of a problem carry the same header again.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <fstream>
#include <map>
#include <set>

#include "agent/workspace.h"
#include "core/version.h"
#include "deck/problem.h"
#include "eval/worker_sandbox.h"
#include "target/compile.h"
#include "target/solution_kit.h"

#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// deck/p/problem.toml, deck/p/kit/problem_kit.h, deck/kit/deck_kit.h and deck/p/solutions/s/
// whose solution.cpp returns PROBLEM_VALUE + DECK_VALUE from the two kits.
struct FakeDeck {
  fs::path root, problem, solution;
  explicit FakeDeck(const std::string& name) {
    root = kb::testing_support::fresh_temp_dir(name);
    problem = root / "deck" / "p";
    solution = problem / "solutions" / "s";
    fs::create_directories(solution);
    fs::create_directories(problem / "kit");
    fs::create_directories(root / "deck" / "kit");
    std::ofstream(problem / "problem.toml") << "# not loaded: its presence marks a problem folder\n";
    std::ofstream(problem / "kit" / "problem_kit.h") << "#define PROBLEM_VALUE 10\n";
    std::ofstream(root / "deck" / "kit" / "deck_kit.h") << "#define DECK_VALUE 1\n";
    std::ofstream(solution / "solution.cpp") << "#include \"problem_kit.h\"\n#include \"deck_kit.h\"\n"
                                                "extern \"C\" int value() { return PROBLEM_VALUE + DECK_VALUE; }\n";
  }
  ~FakeDeck() { fs::remove_all(root); }
};

kb::BuildResult build(const fs::path& dir, const fs::path& build_root) {
  kb::BuildOptions o;
  o.sandbox = kb::probe_worker_sandbox().ok;  // the sandbox where it can run, as evaluations do
  return kb::compile_solution({"g++", "-shared", "-fPIC", (fs::absolute(dir) / "solution.cpp").string()}, dir, "host", o,
                              build_root);
}

int value_of(const fs::path& library) {
  void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return -1;
  auto f = reinterpret_cast<int (*)()>(dlsym(h, "value"));
  const int v = f ? f() : -1;
  dlclose(h);
  return v;
}

}  // namespace

TEST(SolutionKit, ADeckSolutionHasItsProblemsKitThenTheDecks) {
  FakeDeck d("kit-paths");
  const auto kits = kb::solution_kits(d.solution);
  ASSERT_EQ(kits.size(), 2u);
  EXPECT_EQ(kits[0], fs::canonical(d.problem / "kit"));
  EXPECT_EQ(kits[1], fs::canonical(d.root / "deck" / "kit"));
  fs::remove_all(d.root / "deck" / "kit");
  EXPECT_EQ(kb::solution_kits(d.solution), std::vector<fs::path>{fs::canonical(d.problem / "kit")});
}

TEST(SolutionKit, AFolderOutsideTheDeckHasNone) {
  FakeDeck d("kit-outside");
  fs::create_directories(d.root / "ws");
  EXPECT_TRUE(kb::solution_kits(d.root / "ws").empty());         // an agent's workspace
  EXPECT_TRUE(kb::solution_kits(d.root / "missing").empty());    // no folder at all
  fs::remove(d.problem / "problem.toml");                        // solutions/ not inside a problem
  EXPECT_TRUE(kb::solution_kits(d.solution).empty());
}

TEST(SolutionKit, DeckSolutionBuildsWithBothKitsAndAKitChangeRebuilds) {
  FakeDeck d("kit-build");
  const fs::path cache = d.root / "build";
  const kb::BuildResult first = build(d.solution, cache);
  ASSERT_TRUE(first.ok) << first.command << "\n" << first.log;
  EXPECT_NE(first.command.find("-I" + fs::canonical(d.problem / "kit").string()), std::string::npos) << first.command;
  EXPECT_EQ(value_of(first.library), 11);
  EXPECT_TRUE(build(d.solution, cache).cached);
  // The kits are part of the key: a changed header in either one is a new build with its value.
  std::ofstream(d.problem / "kit" / "problem_kit.h") << "#define PROBLEM_VALUE 20\n";
  const kb::BuildResult second = build(d.solution, cache);
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_FALSE(second.cached);
  EXPECT_EQ(value_of(second.library), 21);
  std::ofstream(d.root / "deck" / "kit" / "deck_kit.h") << "#define DECK_VALUE 2\n";
  const kb::BuildResult third = build(d.solution, cache);
  ASSERT_TRUE(third.ok) << third.log;
  EXPECT_FALSE(third.cached);
  EXPECT_EQ(value_of(third.library), 22);
}

TEST(SolutionKit, TheSameFolderCopiedOutOfTheDeckGetsNoKit) {
  FakeDeck d("kit-copy");
  const fs::path copy = d.root / "agent-solution";
  fs::copy(d.solution, copy);
  const kb::BuildResult r = build(copy, d.root / "build");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.command.find("-I"), std::string::npos) << r.command;
  EXPECT_NE(r.log.find("problem_kit.h"), std::string::npos) << r.log;
}

// What `kbench prepare` gives an agent (the workspace and ./kbench's private folder) holds no
// file of any kit: the kits hold the deck's answers and exploit machinery.
TEST(SolutionKit, NoAgentWorkspaceHoldsAKitFile) {
  const fs::path deck = fs::path(kb::source_dir()) / "problems";
  std::set<std::string> kit_texts;
  for (const auto& kit : {deck / "softmax" / "kit", deck / "kda" / "kit", deck / "kit"}) {
    ASSERT_TRUE(fs::is_directory(kit)) << kit;
    for (const auto& f : fs::recursive_directory_iterator(kit))
      if (f.is_regular_file()) kit_texts.insert(slurp(f.path()));
  }
  for (const char* id : {"softmax", "kda"}) {
    const fs::path root = kb::testing_support::fresh_temp_dir(std::string("kit-ws-") + id);
    kb::WorkspaceOptions o;
    o.dir = root / "ws";
    o.private_dir = root / "private";
    o.target = "cuda";
    o.device = "Test device";
    o.kbench_binary = fs::read_symlink("/proc/self/exe");
    o.hardware_dir = fs::path(kb::source_dir()) / "hardware";
    kb::prepare_workspace(kb::load_problem(deck / id), o);
    size_t files = 0;
    for (const auto& top : {o.dir, o.private_dir})
      for (const auto& f : fs::recursive_directory_iterator(top)) {
        if (!f.is_regular_file()) continue;
        ++files;
        EXPECT_EQ(kit_texts.count(slurp(f.path())), 0u) << f.path() << " is a kit file";
        EXPECT_EQ(f.path().string().find("/kit/"), std::string::npos) << f.path();
      }
    EXPECT_GT(files, 3u);
    fs::remove_all(root);
  }
}

// The point of kits: no header is copied into two solution folders of one problem again (the
// shared one goes into problems/<id>/kit/, or problems/kit/ when several problems share it).
TEST(SolutionKit, NoTwoDeckSolutionsCarryTheSameHeader) {
  const fs::path deck = fs::path(kb::source_dir()) / "problems";
  std::map<std::string, fs::path> seen;  // header text -> first folder holding it
  for (const auto& problem : fs::directory_iterator(deck)) {
    if (!fs::is_directory(problem.path() / "solutions")) continue;
    for (const auto& f : fs::recursive_directory_iterator(problem.path() / "solutions")) {
      const std::string ext = f.path().extension().string();
      if (!f.is_regular_file() || (ext != ".h" && ext != ".cuh" && ext != ".hpp")) continue;
      const auto [it, fresh] = seen.emplace(slurp(f.path()), f.path());
      EXPECT_TRUE(fresh) << f.path() << " repeats " << it->second << ": move it into the problem's kit/";
    }
  }
}
