// The sandbox an agent works in, attacked from inside. A run's layout is built as `kbench run`
// builds it (run directory, workspace, private HOME, private problem copy), next to another run
// and another workspace holding secrets, with a secret in the user's HOME; then shell commands in
// the sandbox try to read and write what they must not, and to do what an agent must be able to.
#include <gtest/gtest.h>

#include <map>

#include "agent/budget.h"
#include "agent/sandbox.h"
#include "agent/workspace.h"
#include "target/python_solution.h"
#include "agent_test_util.h"
#include "core/subprocess.h"
#include "core/version.h"

namespace fs = std::filesystem;
using namespace kb;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSecret = "kbench-sandbox-secret-7f3a";

struct Layout {
  fs::path root, runs, run, other_run, other_workspace, host_home_marker;
  Workspace ws;
  fs::path home;
};

class Sandbox : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    probe_ = new SandboxProbe(probe_sandbox());
    if (!probe_->ok) return;
    Layout& l = layout_;
    l.root = kbtest::scratch("sandbox");
    l.runs = l.root / "runs";
    l.run = l.runs / "20260101T000001Z_generic_m_softmax_1";
    l.other_run = l.runs / "20260101T000000Z_generic_m_softmax_1";
    l.other_workspace = l.root / "someone-elses-workspace";
    fs::create_directories(l.other_run / "workspace");
    fs::create_directories(l.other_workspace);
    std::ofstream(l.other_run / "result.json") << kSecret;
    std::ofstream(l.other_run / "workspace" / "solution.cpp") << kSecret;
    std::ofstream(l.other_workspace / "solution.cpp") << kSecret;
    fs::create_directories(l.run / "home");
    std::ofstream(l.run / "run.json") << kSecret;
    l.home = l.run / "home";
    WorkspaceOptions o;
    o.dir = l.run / "workspace";
    o.private_dir = l.run / "kbench";
    o.target = "host";
    o.device = "test";
    o.kbench_binary = KBENCH_BINARY;
    l.ws = prepare_workspace(load_problem(fs::path(source_dir()) / "problems/softmax"), o);
    if (const char* h = std::getenv("HOME"); h && *h && fs::is_directory(h)) {
      l.host_home_marker = fs::path(h) / (".kbench-sandbox-probe-" + std::to_string(getpid()));
      std::ofstream(l.host_home_marker) << kSecret;
      if (!fs::exists(l.host_home_marker)) l.host_home_marker.clear();
    }
  }
  static void TearDownTestSuite() {
    if (!layout_.host_home_marker.empty()) fs::remove(layout_.host_home_marker);
    if (!layout_.root.empty()) fs::remove_all(layout_.root);
    delete probe_;
  }
  void SetUp() override {
    if (!probe_->ok) GTEST_SKIP() << "bubblewrap cannot make a sandbox here: " << probe_->error;
  }

  struct Result {
    BudgetOutcome outcome;
    std::string out;
  };
  // Runs `script` in the run's sandbox, as `kbench run` would.
  static Result in_sandbox(const std::string& script, bool network = true) {
    const Layout& l = layout_;
    SandboxSpec s;
    s.workspace = l.ws.dir;
    s.home = l.home;
    s.read_only = l.ws.read_only;
    s.read_only_in_workspace = {l.ws.wrapper};
    s.network = network;
    BudgetedCommand c;
    c.argv = sandbox_command(s, {"/bin/sh", "-c", script});
    c.sandboxed = true;
    c.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + l.home.string(), "TMPDIR=/tmp", "LANG=C.UTF-8"};
    const fs::path log = l.root / "out.log";
    fs::remove(log);
    c.stdout_file = log;
    c.stderr_file = log;
    c.budget = 3min;
    Result r;
    r.outcome = run_with_budget(c);
    r.out = kbtest::slurp(log);
    return r;
  }
  static std::string q(const fs::path& p) { return join_command({p.string()}); }
  // Shell lines that print "LEAK <path>" for each file the sandbox can read.
  static std::string try_read(const std::vector<fs::path>& files) {
    std::string s;
    for (const auto& f : files) s += "cat " + q(f) + " >/dev/null 2>&1 && echo LEAK " + q(f) + "; ";
    return s;
  }
  // The text between two markers of a script's output.
  static std::string between(const std::string& out, const std::string& from, const std::string& to) {
    const size_t a = out.find(from);
    if (a == std::string::npos) return "<marker '" + from + "' missing>";
    const size_t b = out.find(to, a + from.size());
    return out.substr(a + from.size(), b == std::string::npos ? std::string::npos : b - a - from.size());
  }

  static inline SandboxProbe* probe_ = nullptr;
  static inline Layout layout_;
};

}  // namespace

TEST_F(Sandbox, CannotReadTheKbenchSourceTree) {
  const fs::path src = source_dir();
  std::vector<fs::path> files = {src / "CMakeLists.txt", src / "problems/softmax/reference.cpp",
                                 src / "problems/softmax/problem.toml", src / "problems/softmax/solutions/host-naive/solution.cpp",
                                 src / "src/eval/judge.cpp", src / "include/kbench/solution.h"};
  for (const auto& e : fs::directory_iterator(src / "hardware")) files.push_back(e.path());
  auto r = in_sandbox(try_read(files) + "echo '--- listing'; ls -A " + q(src) + " 2>/dev/null; echo end");
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
  // All the sandbox shows of the tree is the folder on the way to the kbench binary, if the
  // binary was built inside it (build/), and in that folder the binary alone -- and kbench's
  // Python bridge beside it where the workspace offers Python solutions (agent/workspace.h).
  const fs::path bin_rel = fs::path(KBENCH_BINARY).lexically_relative(src);
  const std::string expected = bin_rel.empty() || *bin_rel.begin() == ".." ? "" : bin_rel.begin()->string() + "\n";
  EXPECT_EQ(between(r.out, "--- listing\n", "end"), expected) << r.out;
  if (!expected.empty()) {
    auto b = in_sandbox("ls -A " + q(fs::path(KBENCH_BINARY).parent_path()));
    std::string shown = fs::path(KBENCH_BINARY).filename().string() + "\n";
    const fs::path bridge = python_bridge_library();
    if (layout_.ws.python && bridge.parent_path() == fs::path(KBENCH_BINARY).parent_path())
      shown += bridge.filename().string() + "\n";
    EXPECT_EQ(b.out, shown);
  }
}

TEST_F(Sandbox, CannotReadOtherRunsNorItsOwnRunRecord) {
  const Layout& l = layout_;
  auto r = in_sandbox(try_read({l.other_run / "result.json", l.other_run / "workspace/solution.cpp", l.run / "run.json"}) +
                      "echo '--- runs'; ls -A " + q(l.runs) + " 2>/dev/null; echo '--- run'; ls -A " + q(l.run) +
                      " 2>/dev/null; echo end");
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
  EXPECT_EQ(between(r.out, "--- runs\n", "--- run\n"), l.run.filename().string() + "\n") << "another run is visible:\n" << r.out;
  // Only the mount points of this run's own folders: no run.json, transcript, result.json.
  EXPECT_EQ(between(r.out, "--- run\n", "end"), "home\nkbench\nworkspace\n") << r.out;
}

TEST_F(Sandbox, CannotReadOtherWorkspaces) {
  auto r = in_sandbox(try_read({layout_.other_workspace / "solution.cpp"}) + "echo '--- root'; ls -A " + q(layout_.root) +
                      " 2>/dev/null; echo end");
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
  EXPECT_EQ(between(r.out, "--- root\n", "end"), "runs\n") << r.out;
}

TEST_F(Sandbox, CannotReadTheUsersHome) {
  if (layout_.host_home_marker.empty()) GTEST_SKIP() << "no writable $HOME to plant a secret in";
  const fs::path home = layout_.host_home_marker.parent_path();
  auto r = in_sandbox(try_read({layout_.host_home_marker}) + "echo '--- home'; ls -A " + q(home) +
                      " 2>/dev/null; echo end; echo \"HOME=$HOME\"");
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
  EXPECT_EQ(between(r.out, "--- home\n", "end"), "") << r.out;
  EXPECT_NE(r.out.find("HOME=" + layout_.home.string()), std::string::npos) << r.out;
}

TEST_F(Sandbox, CannotWriteOutsideItsOwnFolders) {
  const Layout& l = layout_;
  const fs::path src = source_dir();
  const std::vector<fs::path> targets = {src / "pwned",
                                         src / "problems/softmax/problem.toml",
                                         l.runs / "pwned",
                                         l.run / "run.json",
                                         l.other_run / "result.json",
                                         l.other_workspace / "solution.cpp",
                                         l.ws.private_dir / "problems/softmax/problem.toml",
                                         l.ws.private_dir / "pwned",
                                         l.ws.wrapper,
                                         KBENCH_BINARY,
                                         "/usr/pwned",
                                         "/etc/pwned",
                                         "/pwned"};
  std::map<fs::path, std::string> before;
  for (const auto& t : targets)
    if (fs::exists(t)) before[t] = kbtest::slurp(t);
  std::string script;
  for (const auto& t : targets) script += "echo PWNED > " + q(t) + " 2>/dev/null && echo WROTE " + q(t) + "; ";
  script += "rm -f " + q(l.ws.wrapper) + " 2>/dev/null && echo WROTE removed-wrapper; echo end";
  auto r = in_sandbox(script);
  EXPECT_NE(r.out.find("end"), std::string::npos) << r.out;
  // Inside, every write fails -- except where a path lies under /tmp, as this test's scratch
  // folder does: there the folders leading to the bound ones are part of the sandbox's private
  // /tmp, so a write succeeds into that private scratch. What matters is the host, checked below.
  const std::string tmp = fs::temp_directory_path().string() + "/";
  for (const auto& t : targets) {
    if (t.string().rfind(tmp, 0) != 0 || t.string().rfind(l.ws.private_dir.string(), 0) == 0 || t == l.ws.wrapper) {
      EXPECT_EQ(r.out.find("WROTE " + q(t)), std::string::npos) << r.out;
    }
  }
  EXPECT_EQ(r.out.find("WROTE removed-wrapper"), std::string::npos) << r.out;
  for (const auto& t : targets) {
    if (before.count(t)) {
      EXPECT_EQ(kbtest::slurp(t), before[t]) << t << " changed";
    } else {
      EXPECT_FALSE(fs::exists(t)) << t << " was created";
    }
  }
}

TEST_F(Sandbox, CanWriteItsWorkspaceHomeAndPrivateTmp) {
  const Layout& l = layout_;
  const std::string tmp_name = "kbench-sandbox-tmp-" + std::to_string(getpid());
  auto r = in_sandbox("echo a > notes.txt && echo b > \"$HOME/.agentrc\" && echo c > /tmp/" + tmp_name +
                      " && mkdir -p build && echo d > build/x && echo ok");
  EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
  EXPECT_EQ(kbtest::slurp(l.ws.dir / "notes.txt"), "a\n");
  EXPECT_EQ(kbtest::slurp(l.home / ".agentrc"), "b\n");
  EXPECT_TRUE(fs::exists(l.ws.dir / "build/x"));
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / tmp_name)) << "the sandbox's /tmp is the host's";
  fs::remove(l.ws.dir / "notes.txt");
  fs::remove_all(l.ws.dir / "build");
}

TEST_F(Sandbox, KbenchCheckPassesInsideOnTheHostTarget) {
  const Layout& l = layout_;
  fs::copy_file(fs::path(source_dir()) / "problems/softmax/solutions/host-naive/solution.cpp", l.ws.dir / "solution.cpp",
                fs::copy_options::overwrite_existing);
  auto r = in_sandbox("./kbench check; echo \"exit=$?\"");
  EXPECT_NE(r.out.find("verdict PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit=0"), std::string::npos) << r.out;
  // Its build cache and logs went to the private HOME.
  EXPECT_TRUE(fs::exists(l.home / ".cache/kbench/build")) << r.out;
}

TEST_F(Sandbox, HasNoCapabilitiesAndSeesOnlyItsOwnProcesses) {
  auto r = in_sandbox("grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'");
  EXPECT_NE(r.out.find("CapEff:\t0000000000000000"), std::string::npos) << r.out;
  const int visible = std::stoi(r.out.substr(r.out.find('\n') + 1));
  EXPECT_LT(visible, 10) << "the sandbox sees processes outside its PID namespace";
}

TEST_F(Sandbox, NoNetworkLeavesOnlyLoopback) {
  auto r = in_sandbox("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", false);
  EXPECT_EQ(r.out, "lo\n");
}
