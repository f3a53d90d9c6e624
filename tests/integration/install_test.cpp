// The installed kbench (`cmake --install`, cmake/KbenchInstall.cmake): it finds its deck, datasheets
// and solution header relative to its own binary, in a prefix moved after the install; the data
// folder can be named by $KBENCH_DATA_DIR; and the shell completion the build writes names every
// command and option of the real command line. (The Debian package on a clean Debian 12 root:
// tests/package/package_test.sh.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "target/python_solution.h"

namespace fs = std::filesystem;

namespace {

// A clean environment: no KBENCH_* variable points the binary at the source tree.
std::vector<std::string> clean_env(std::vector<std::string> extra = {}) {
  std::vector<std::string> env = {"PATH=" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"),
                                  "HOME=" + std::string(std::getenv("HOME") ? std::getenv("HOME") : "/tmp")};
  for (const char* keep : {"KBENCH_CACHE_DIR", "XDG_CACHE_HOME", "TMPDIR"})
    if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

kb::CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd = {}) {
  return kb::run_command(argv, std::chrono::minutes(5), cwd, &env);
}

std::vector<std::string> listed_problems(const std::string& list_json) {
  std::vector<std::string> names;
  for (const auto& p : nlohmann::json::parse(list_json)) names.push_back(p["name"]);
  return names;
}

// This process's folder for the tests' scratch folders; removed whole when a test is done with it.
// Named, never derived from a scratch folder's parent: a helper that named its folders otherwise
// once made that parent /tmp itself.
fs::path scratch_root() { return fs::temp_directory_path() / ("kbench-install-test-" + std::to_string(getpid())); }

fs::path scratch(const std::string& name) {
  const fs::path d = scratch_root() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

class Installed : public ::testing::Test {
 protected:
  // One install for the whole suite, moved away from where it was installed.
  static void SetUpTestSuite() {
    const fs::path root = scratch("prefix");
    auto r = run({"cmake", "--install", KBENCH_BUILD_DIR, "--prefix", (root / "installed").string()}, clean_env());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    fs::rename(root / "installed", root / "moved");
    prefix_ = root / "moved";
  }
  static void TearDownTestSuite() { fs::remove_all(scratch_root()); }
  static fs::path prefix_;
};
fs::path Installed::prefix_;

TEST_F(Installed, HasTheFhsLayout) {
  for (const char* f : {"bin/kbench", "share/kbench/problems/softmax/problem.toml", "share/kbench/hardware",
                        "share/kbench/prices/models.toml", "include/kbench/solution.h", "share/doc/kbench/README.md",
                        "share/doc/kbench/install.md", "share/bash-completion/completions/kbench",
                        "share/zsh/vendor-completions/_kbench"})
    EXPECT_TRUE(fs::exists(prefix_ / f)) << f;
}

TEST_F(Installed, ReadsTheDeckOfItsOwnPrefix) {
  // The prefix's deck cut down to one problem: a binary reading the source tree's would list all.
  const fs::path deck = prefix_ / "share/kbench/problems";
  for (const auto& e : fs::directory_iterator(deck))
    if (e.path().filename() != "softmax") fs::remove_all(e.path());
  auto r = run({(prefix_ / "bin/kbench").string(), "list", "--json"}, clean_env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(listed_problems(r.output), std::vector<std::string>{"softmax"}) << r.output;
}

TEST_F(Installed, ChecksAHostSolutionAgainstTheInstalledHeader) {
  const fs::path solution = prefix_ / "share/kbench/problems/softmax/solutions/host-naive";
  auto r = run({(prefix_ / "bin/kbench").string(), "check", "softmax", solution.string(), "--target", "host", "--shape", "0"},
               clean_env(), prefix_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // An exploit still fails from the install.
  r = run({(prefix_ / "bin/kbench").string(), "check", "softmax",
           (prefix_ / "share/kbench/problems/softmax/solutions/exploit-host-no-write").string(), "--target", "host", "--shape",
           "0"},
          clean_env(), prefix_);
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

// The installed kbench runs a Python solution through the bridge of its own prefix
// (<prefix>/lib/kbench/, target/python_solution.h), not the build tree's.
TEST_F(Installed, RunsAPythonSolutionWithTheBridgeOfItsOwnPrefix) {
  if (const auto why = kb::python_unavailable_reason("host")) {
    if (std::getenv("CI")) FAIL() << "Python solutions unavailable in CI: " << *why;
    GTEST_SKIP() << "Python solutions unavailable here: " << *why;
  }
  const fs::path bridge = prefix_ / "lib/kbench/libkbench_python_bridge.so";
  ASSERT_TRUE(fs::is_regular_file(bridge));
  const fs::path solution = prefix_ / "share/kbench/problems/softmax/solutions/python-torch";
  auto r = run({(prefix_ / "bin/kbench").string(), "check", "softmax", solution.string(), "--target", "host", "--shape", "0",
                "--json"},
               clean_env(), prefix_);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(std::min(r.output.find('{'), r.output.size())), nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "pass") << r.output;
  EXPECT_NE(j["build"]["command"].get<std::string>().find(bridge.string()), std::string::npos) << j["build"].dump();
}

TEST(DataDir, KbenchDataDirNamesTheDeckAndKbenchProblemsStillWins) {
  const fs::path data = scratch("data");
  fs::create_directories(data / "problems");
  fs::copy(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax", data / "problems/softmax", fs::copy_options::recursive);
  fs::copy(fs::path(KBENCH_SOURCE_DIR) / "hardware", data / "hardware", fs::copy_options::recursive);
  auto r = run({KBENCH_BINARY, "list", "--json"}, clean_env({"KBENCH_DATA_DIR=" + data.string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(listed_problems(r.output), std::vector<std::string>{"softmax"}) << r.output;
  // An explicit deck beats the data folder.
  r = run({KBENCH_BINARY, "list", "--json"},
          clean_env({"KBENCH_DATA_DIR=" + data.string(), "KBENCH_PROBLEMS=" + std::string(KBENCH_SOURCE_DIR) + "/problems"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(listed_problems(r.output).size(), 1u) << r.output;
  // A data folder without the deck is named in the error.
  const fs::path empty = scratch("empty-data");
  r = run({KBENCH_BINARY, "list"}, clean_env({"KBENCH_DATA_DIR=" + empty.string()}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(empty.string()), std::string::npos) << r.output;
  fs::remove_all(scratch_root());
}

// --- Shell completion --------------------------------------------------------------------------

// Every command path and its options, read from `kbench ... --help` (CLI11's help text), which is
// independent of the completion writer's walk of the command tree.
struct HelpNode {
  std::vector<std::string> path;  // {"site", "build"}
  std::set<std::string> options;  // "--json", "-h"
  std::vector<std::string> subcommands;
};

void read_help(std::vector<std::string> path, std::vector<HelpNode>& out) {
  std::vector<std::string> argv = {KBENCH_BINARY};
  argv.insert(argv.end(), path.begin(), path.end());
  argv.push_back("--help");
  auto r = kb::run_command(argv, std::chrono::minutes(1));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  HelpNode n;
  n.path = path;
  std::istringstream in(r.output);
  std::string line, section;
  const std::regex option_line(R"(^  (-[^ ]+))"), sub_line(R"(^  ([a-z][a-z0-9-]*) )");
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == ':' && line[0] != ' ') {
      section = line;
      continue;
    }
    std::smatch m;
    if (section == "Options:" && std::regex_search(line, m, option_line)) {
      // "-h,--help" or "--target TEXT=auto"
      std::string names = m[1];
      std::stringstream ss(names);
      // "--no-baseline{false}": CLI11 shows a flag's value after it.
      for (std::string name; std::getline(ss, name, ',');) n.options.insert(name.substr(0, name.find_first_of("={")));
    } else if (section == "Subcommands:" && std::regex_search(line, m, sub_line)) {
      n.subcommands.push_back(m[1]);
    }
  }
  out.push_back(n);
  for (const auto& s : n.subcommands) {
    auto sub = path;
    sub.push_back(s);
    read_help(sub, out);
  }
}

std::string completion(const std::string& shell) {
  auto r = kb::run_command({KBENCH_BINARY, "completion", shell}, std::chrono::minutes(1));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

TEST(Completion, BothShellsNameEveryCommandAndOptionOfTheHelp) {
  std::vector<HelpNode> nodes;
  read_help({}, nodes);
  ASSERT_GT(nodes.size(), 15u);
  for (const std::string shell : {"bash", "zsh"}) {
    const std::string script = completion(shell);
    for (const auto& n : nodes) {
      std::string path = "kbench";
      for (const auto& p : n.path) path += " " + p;
      // Each command's own case, offering each of its subcommands and options.
      const size_t at = script.find("\"" + path + "\")" + (shell == "bash" ? " words=" : "\n"));
      ASSERT_NE(at, std::string::npos) << shell << ": no case for '" << path << "'";
      const std::string body = script.substr(at, script.find(";;", at) - at);
      std::set<std::string> offered;
      if (shell == "bash") {  // words="list show --help ..."
        const size_t open = body.find("words=\"") + 7;
        std::istringstream words(body.substr(open, body.find('"', open) - open));
        for (std::string w; words >> w;) offered.insert(w);
      } else {  // subs=('list:List the problems' ...) opts=('--help:Print ...' ...)
        const std::regex item(R"('([^':]+):)");
        for (std::sregex_iterator it(body.begin(), body.end(), item), end; it != end; ++it) offered.insert((*it)[1]);
      }
      for (const auto& s : n.subcommands) EXPECT_EQ(offered.count(s), 1u) << shell << " " << path << ": " << s;
      for (const auto& o : n.options) EXPECT_EQ(offered.count(o), 1u) << shell << " " << path << ": " << o;
    }
  }
}

// Runs the bash completion function on a command line ending with the word being completed.
std::set<std::string> bash_complete(const std::string& script_file, const std::vector<std::string>& words) {
  std::string array;
  for (const auto& w : words) array += " '" + w + "'";
  const std::string program = "source '" + script_file + "'; COMP_WORDS=(" + array + "); COMP_CWORD=" +
                              std::to_string(words.size() - 1) + "; _kbench; printf '%s\\n' \"${COMPREPLY[@]}\"";
  auto r = kb::run_command({"bash", "-c", program}, std::chrono::minutes(1));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.insert(line);
  return out;
}

TEST(Completion, BashCompletesCommandsSubcommandsAndOptions) {
  const fs::path dir = scratch("bash");
  const fs::path file = dir / "kbench.bash";
  std::ofstream(file) << completion("bash");
  EXPECT_EQ(bash_complete(file, {"kbench", "ev"}), (std::set<std::string>{"eval"}));
  EXPECT_EQ(bash_complete(file, {"kbench", "site", ""}).count("serve"), 1u);
  EXPECT_EQ(bash_complete(file, {"kbench", "eval", "--max-"}), (std::set<std::string>{"--max-time", "--max-samples"}));
  // Options of another command are not offered.
  EXPECT_EQ(bash_complete(file, {"kbench", "list", "--for"}), (std::set<std::string>{}));
  // After an option that takes a value, files (here: the folder's own file).
  EXPECT_EQ(bash_complete(file, {"kbench", "eval", "--out", (dir / "kbench.b").string()}),
            (std::set<std::string>{file.string()}));
  fs::remove_all(scratch_root());
}

TEST(Completion, ZshScriptParses) {
  if (kb::run_command({"sh", "-c", "command -v zsh"}, std::chrono::seconds(10)).exit_code != 0)
    GTEST_SKIP() << "zsh is not installed (scripts/setup --package installs it)";
  const fs::path dir = scratch("zsh");
  std::ofstream(dir / "_kbench") << completion("zsh");
  auto r = kb::run_command({"zsh", "-n", (dir / "_kbench").string()}, std::chrono::minutes(1));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  fs::remove_all(scratch_root());
}

}  // namespace
