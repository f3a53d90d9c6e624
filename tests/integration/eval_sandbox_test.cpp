// The evaluation's sandbox, attacked by the solution it judges (host target, through the real
// kbench binary). Each attack is one a hostile agent's code tried against kbench before the build
// and the worker were sandboxed (docs/threat-model.md): a daemon that outlives kbench and rewrites
// the verdict, reads of kbench's environment, HOME and the problem's reference, includes of host
// files, and workers left spinning after kbench was killed. Honest solutions still pass (the
// corpus tests run every honest solution through the same sandbox). Built twice: for the host
// target (label integration) and the cuda target (label gpu, skipped without a GPU), where the
// attacks ride in an extra .cpp file beside the honest cuda softmax.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent_test_util.h"
#include "core/subprocess.h"
#include "eval/worker_sandbox.h"
#include "loaded_machine.h"
#include "target/target.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kFakeKey = "sk-ant-kbench-fake-key-5d1c";
constexpr const char* kHomeSecret = "kbench-home-secret-91e4";

const fs::path kSource = KBENCH_SOURCE_DIR;
const std::string kTarget = EVAL_SANDBOX_TARGET;

// The honest naive softmax, with `extra` added at the end (an attack in a static constructor).
std::string honest_softmax(const std::string& extra, bool wrong = false) {
  std::string s = kbtest::slurp(kSource / "problems/softmax/solutions/host-naive/solution.cpp");
  if (wrong) s.replace(s.find("yr[j] /= sum;"), std::string("yr[j] /= sum;").size(), "yr[j] /= 2 * sum;");
  return s + "\n" + extra;
}

// `text` with each placeholder replaced.
std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [k, v] : values)
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + v.size())) text.replace(at, k.size(), v);
  return text;
}

// Processes whose environment holds `marker` (the worker gets CUDA_* variables from kbench's: the
// test names its workers this way, sandboxed or not).
std::vector<pid_t> processes_with_env(const std::string& marker, const std::string& in_cmdline = {}) {
  std::vector<pid_t> out;
  if (marker.empty()) return out;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (!end || *end || pid <= 0 || pid == getpid()) continue;
      const std::string env = kbtest::slurp(std::string("/proc/") + e->d_name + "/environ");
      if (env.find(marker) == std::string::npos) continue;
      if (!in_cmdline.empty() &&
          kbtest::slurp(std::string("/proc/") + e->d_name + "/cmdline").find(in_cmdline) == std::string::npos)
        continue;
      out.push_back(static_cast<pid_t>(pid));
    }
    closedir(d);
  }
  return out;
}

class EvalSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kTarget == "cuda" && !kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
    const kb::BwrapProbe p = kb::probe_worker_sandbox();
    if (!p.ok) GTEST_SKIP() << "bubblewrap cannot make a sandbox here: " << p.error;
    root_ = kbtest::scratch(std::string("evalsb-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    home_ = root_ / "home";
    fs::create_directories(home_);
    std::ofstream(home_ / "secret.txt") << kHomeSecret;
    marker_ = "CUDA_KBENCH_TEST_MARKER=" + std::to_string(getpid()) + "-" + root_.filename().string();
  }
  void TearDown() override {
    // Only this test's own processes (a skipped test has no marker: nothing to clean up).
    if (!marker_.empty())
      for (pid_t p : processes_with_env(marker_))
        if (p > 0) kill(p, SIGKILL);
    if (!root_.empty() && !std::getenv("KBTEST_KEEP")) fs::remove_all(root_);
  }

  // The honest softmax of the test's target with `prefix` at the top of its main source and
  // `attack` added (host: at the end of solution.cpp; cuda: as attack.cpp); `wrong` makes it fail
  // (host: wrong outputs, `mismatch`; cuda: kb_setup returns 1, `setup_error`).
  fs::path solution(const std::string& name, const std::string& attack, bool wrong = false, const std::string& prefix = "") {
    const fs::path d = root_ / name;
    fs::create_directories(d);
    if (kTarget == "host") {
      std::ofstream(d / "solution.cpp") << prefix << honest_softmax(attack, wrong);
      return d;
    }
    const fs::path honest = kSource / "problems/softmax/solutions/cuda-fast";
    // Outside the deck the problem's kit is not on the include path: the kernel comes along.
    fs::copy_file(kSource / "problems/softmax/kit/softmax_kernel.cuh", d / "softmax_kernel.cuh");
    std::string main = kbtest::slurp(honest / "solution.cu");
    const std::string setup = "void** state) {";
    if (wrong) main.replace(main.find(setup), setup.size(), setup + "\n  if (p) return 1;");
    std::ofstream(d / "solution.cu") << prefix << main;
    if (!attack.empty()) std::ofstream(d / "attack.cpp") << attack;
    return d;
  }
  static std::string failure_when_wrong() { return kTarget == "host" ? "mismatch" : "setup_error"; }

  std::vector<std::string> env() const {
    std::vector<std::string> e = {"PATH=" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"),
                                  "HOME=" + home_.string(),
                                  std::string("ANTHROPIC_API_KEY=") + kFakeKey,
                                  std::string("OPENAI_API_KEY=") + kFakeKey,
                                  "KBENCH_CACHE_DIR=" + (root_ / "cache").string(),
                                  marker_};
    // Where kbench's own libraries live outside the system folders (a GPU machine with unpacked
    // packages), kbench needs this to start at all; the worker sandbox carries those libraries itself.
    if (const char* l = std::getenv("LD_LIBRARY_PATH")) e.push_back(std::string("LD_LIBRARY_PATH=") + l);
    return e;
  }

  // Starts `kbench args...` with env(); its output goes to root_/kbench.log.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {KBENCH_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--target", kTarget});
    const std::vector<std::string> e = env();
    const std::string log = (root_ / "kbench.log").string();
    const pid_t pid = fork();
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> a, ev;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      for (const auto& s : e) ev.push_back(const_cast<char*>(s.c_str()));
      ev.push_back(nullptr);
      execve(a[0], a.data(), ev.data());
      _exit(127);
    }
    return pid;
  }
  // Runs `kbench args...` to its end; a timed evaluation the machine was too loaded to judge is
  // judged again (loaded_machine.h).
  int run(const std::vector<std::string>& args) {
    const auto once = [&] {
      const pid_t pid = start(args);
      int st = 0;
      waitpid(pid, &st, 0);
      kb::CommandResult r;
      r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      r.output = output();
      return r;
    };
    if (!kb::test::timed_evaluation(args)) return once().exit_code;
    return kb::test::judged(once, kb::test::forget_out(args)).exit_code;
  }
  std::string output() const { return kbtest::slurp(root_ / "kbench.log"); }
  // Every file under `dir`, concatenated (result.json, worker logs, build logs).
  static std::string all_text(const fs::path& dir) {
    std::string s;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_regular_file()) s += kbtest::slurp(e.path());
    return s;
  }

  fs::path root_, home_;
  std::string marker_;
};

// A failing solution forks a daemon from a static constructor (through a function pointer, so no
// call by name), which calls setsid() and forks again, then waits for kbench to write result.json
// and rewrites it to "pass", and writes into another run's folder. In the sandbox the daemon dies
// with the worker (PID namespace), and the records are not even visible to it.
TEST_F(EvalSandbox, DaemonFromAStaticConstructorCannotForgeTheVerdictOrTouchAnotherRun) {
  const fs::path out = root_ / "result", victim = root_ / "other-run";
  fs::create_directories(victim);
  std::ofstream(victim / "run.json") << "{\"verdict\": \"fail\"}";
  const std::string sleep_marker = kbtest::marker_seconds(1);
  const std::string attack = fill(R"K(
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
using process_fn = pid_t(void);
extern "C" process_fn fork;
static void forge_later() {
  pid_t (*spawn)(void) = fork;
  int (*run)(const char*, char* const[]) = execv;
  if (spawn() != 0) { int st; wait(&st); return; }
  setsid();
  if (spawn() != 0) _exit(0);
  if (spawn() == 0) {  // the survivor a process listing can find
    char* args[] = {(char*)"sleep", (char*)"@SLEEP@", nullptr};
    run("/bin/sleep", args);
    run("/usr/bin/sleep", args);
    _exit(0);
  }
  for (int i = 0; i < 300; ++i) {
    usleep(100000);
    std::ofstream("@VICTIM@/pwned") << "daemon";
    std::ifstream in("@RESULT@");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string r = ss.str();
    size_t at = r.find("\"verdict\": \"fail\"");
    if (at == std::string::npos) continue;
    r.replace(at, 17, "\"verdict\": \"pass\"");
    std::ofstream("@RESULT@") << r;
  }
  _exit(0);
}
__attribute__((constructor)) static void daemon_start() { forge_later(); }
)K",
                                  {{"@SLEEP@", sleep_marker}, {"@VICTIM@", victim.string()}, {"@RESULT@", (out / "result.json").string()}});
  const fs::path sol = solution("daemon", attack, /*wrong=*/true);
  const int rc = run({"eval", "softmax", sol.string(), "--out", out.string(), "--no-baseline", "--max-time", "0.2"});
  ASSERT_EQ(rc, 1) << output();
  // Long enough for a surviving daemon to act (it polls every 0.1 s).
  std::this_thread::sleep_for(3s);
  const json r = json::parse(kbtest::slurp(out / "result.json"));
  EXPECT_EQ(r["verdict"], "fail");
  EXPECT_EQ(r["failure"], failure_when_wrong()) << "the attack must reach the worker, not be stopped earlier: " << r["message"];
  EXPECT_EQ(r["sandbox"]["kind"], "bwrap");
  EXPECT_FALSE(fs::exists(victim / "pwned"));
  EXPECT_TRUE(kbtest::sleepers(sleep_marker).empty()) << "a process the solution started outlived kbench";
  for (pid_t p : kbtest::sleepers(sleep_marker)) kill(p, SIGKILL);
}

// Solution code reads kbench's environment (keys), HOME's files, the problem's reference and the
// runs around it, from a static constructor (before any filter), and prints what it found.
TEST_F(EvalSandbox, SolutionSeesNoKeyNoHomeNoReferenceAndNoNetwork) {
  const fs::path out = root_ / "result";
  const std::string attack = fill(R"K(
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
static std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
__attribute__((constructor)) static void spy() {
  std::printf("PROBE-RAN\n");
  std::string env = read_all(std::string("/pr") + "oc/self/environ");
  if (env.find("sk-ant-") != std::string::npos) std::printf("LEAK key\n");
  if (env.find("HOME=") != std::string::npos) std::printf("LEAK HOME variable\n");
  if (!read_all("@HOME@/secret.txt").empty()) std::printf("LEAK home file\n");
  if (!read_all("@REFERENCE@").empty()) std::printf("LEAK reference.cpp\n");
  if (!read_all("@SOURCE@/CMakeLists.txt").empty() || !read_all("/etc/passwd").empty()) std::printf("LEAK host files\n");
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(53);
  inet_pton(AF_INET, "8.8.8.8", &a.sin_addr);
  if (s >= 0 && connect(s, (sockaddr*)&a, sizeof a) == 0) std::printf("LEAK network\n");
  std::fflush(stdout);
}
)K",
                                  {{"@HOME@", home_.string()},
                                   {"@REFERENCE@", (kSource / "problems/softmax/reference.cpp").string()},
                                   {"@SOURCE@", kSource.string()}});
  const fs::path sol = solution("spy", attack);
  const int rc = run({"check", "softmax", sol.string(), "--out", out.string(), "--shape", "0"});
  EXPECT_EQ(rc, 0) << output();
  const std::string logs = all_text(out);
  EXPECT_NE(logs.find("PROBE-RAN"), std::string::npos) << "the spy never ran; logs:\n" << logs;
  EXPECT_EQ(logs.find("LEAK"), std::string::npos) << logs;
}

// Includes of host files: a plain include fails the build with a reason naming the rule, and
// __has_include answers "no" for every file outside the solution folder and the system headers.
TEST_F(EvalSandbox, HostIncludesFailTheBuildWithAClearReason) {
  const fs::path out = root_ / "result";
  const fs::path ref = kSource / "problems/softmax/reference.cpp";
  const fs::path sol = solution("include", "", false, "#include \"" + (home_ / "secret.txt").string() + "\"\n");
  EXPECT_EQ(run({"eval", "softmax", sol.string(), "--out", out.string(), "--no-baseline"}), 1) << output();
  const json r = json::parse(kbtest::slurp(out / "result.json"));
  EXPECT_EQ(r["failure"], "build_error");
  EXPECT_NE(r.dump().find("outside the solution folder"), std::string::npos) << r.dump(2);
  EXPECT_EQ(r.dump().find(kHomeSecret), std::string::npos);

  const fs::path out2 = root_ / "result2";
  const fs::path probe = solution("has-include", "", false,
                                  "#if __has_include(\"" + ref.string() + "\") || __has_include(\"" +
                                      (home_ / "secret.txt").string() + "\")\n#error LEAK host file exists\n#endif\n");
  EXPECT_EQ(run({"check", "softmax", probe.string(), "--out", out2.string(), "--shape", "0"}), 0) << output();
  EXPECT_EQ(output().find("LEAK"), std::string::npos) << output();
}

// kbench killed (SIGKILL, SIGTERM) while a solution spins in kb_run: no worker is left, with the
// sandbox and without it (the parent-death signal).
TEST_F(EvalSandbox, KillingKbenchLeavesNoWorkerBehind) {
  fs::path sol;
  if (kTarget == "host") {  // spinning in kb_run, under the system-call filter
    std::string src = kbtest::slurp(kSource / "problems/softmax/solutions/host-naive/solution.cpp");
    const std::string at = "const auto* s = static_cast<const State*>(state);";
    src.replace(src.find(at), at.size(), at + "\n  for (volatile unsigned long i = 0;; ++i) {}");
    sol = root_ / "spin";
    fs::create_directories(sol);
    std::ofstream(sol / "solution.cpp") << src;
  } else {  // spinning in a static constructor, with the CUDA runtime linked in
    sol = solution("spin", "__attribute__((constructor)) static void spin() { for (volatile unsigned long i = 0;; ++i) {} }\n");
  }
  struct Case {
    int signal;
    bool sandbox;
  };
  for (const Case c : {Case{SIGKILL, true}, Case{SIGTERM, true}, Case{SIGKILL, false}, Case{SIGINT, false}}) {
    SCOPED_TRACE(std::string(strsignal(c.signal)) + (c.sandbox ? " (sandboxed)" : " (--no-sandbox)"));
    std::vector<std::string> args = {"check", "softmax", sol.string(), "--out", (root_ / "result").string(), "--shape", "0"};
    if (!c.sandbox) args.push_back("--no-sandbox");
    const pid_t kbench = start(args);
    ASSERT_GT(kbench, 0);
    // The worker is running the spinning kb_run once it exists for a moment.
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (processes_with_env(marker_, "__worker").empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(50ms);
    ASSERT_FALSE(processes_with_env(marker_, "__worker").empty()) << "no worker started:\n" << output();
    std::this_thread::sleep_for(500ms);
    kill(kbench, c.signal);
    int st;
    waitpid(kbench, &st, 0);
    deadline = std::chrono::steady_clock::now() + 10s;
    while (!processes_with_env(marker_).empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(processes_with_env(marker_).empty()) << "a worker outlived kbench";
  }
}

// A machine without a sandbox refuses to judge (exit 2, saying why and what to pass), unless told
// --no-sandbox, which result.json records. Simulated with a PATH on which bwrap is not found.
TEST_F(EvalSandbox, NoSandboxRefusesUnlessToldAndIsRecorded) {
  const fs::path honest = kSource / "problems/softmax/solutions" / (kTarget == "host" ? "host-naive" : "cuda-fast");
  // A bwrap that fails the way a machine without user namespaces makes it fail.
  const fs::path bin = root_ / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "bwrap") << "#!/bin/sh\n[ \"$1\" = --version ] && { echo bubblewrap 0.8.0; exit 0; }\n"
                                  "echo 'bwrap: No permissions to create new namespace' >&2\nexit 1\n";
  fs::permissions(bin / "bwrap", fs::perms::owner_all);
  std::vector<std::string> argv = {KBENCH_BINARY, "eval", "softmax", honest.string(), "--no-baseline", "--max-time",
                                   "0.2", "--target", kTarget, "--out", (root_ / "r1").string()};
  std::vector<std::string> e = env();
  e[0] = "PATH=" + bin.string() + ":" + e[0].substr(5);
  const kb::CommandResult refused = kb::run_command(argv, 120s, {}, &e);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--no-sandbox"), std::string::npos) << refused.output;
  argv.back() = (root_ / "r2").string();
  argv.push_back("--no-sandbox");
  const kb::CommandResult judged =
      kb::test::judged([&] { return kb::run_command(argv, 300s, {}, &e); }, kb::test::forget_out(argv));
  EXPECT_EQ(judged.exit_code, 0) << judged.output;
  const json r = json::parse(kbtest::slurp(root_ / "r2" / "result.json"));
  EXPECT_EQ(r["sandbox"]["kind"], "none");
  EXPECT_NE(r["sandbox"]["reason"].get<std::string>().find("--no-sandbox"), std::string::npos);
}

// W^X (docs/threat-model.md, guarantee 7) is on by default on both targets, and its escape hatch is
// an option that result.json records, never a silent default: the deck's JIT exploit of the target
// (machine code written into a page, then made executable; its outputs are honest) fails as
// sandbox_violation with the rule on, and passes with --allow-exec-memory, recorded off.
TEST_F(EvalSandbox, WriteXorExecuteIsOnUnlessAllowedAndIsRecorded) {
  const fs::path jit = kSource / "problems/softmax/solutions" / ("exploit-" + kTarget + "-jit-toggle");
  for (const bool allowed : {false, true}) {
    const fs::path out = root_ / (allowed ? "allowed" : "default");
    std::vector<std::string> args = {"eval", "softmax", jit.string(), "--no-baseline", "--max-time", "0.2",
                                     "--min-samples", "5", "--warmup", "0.02", "--out", out.string()};
    if (allowed) args.push_back("--allow-exec-memory");
    EXPECT_EQ(run(args), allowed ? 0 : 1) << output();
    const json r = json::parse(kbtest::slurp(out / "result.json"));
    EXPECT_EQ(r["verdict"], allowed ? "pass" : "fail") << r["message"];
    if (!allowed) EXPECT_EQ(r["failure"], "sandbox_violation") << r["message"];
    EXPECT_EQ(r["sandbox"]["seccomp"], true);
    EXPECT_EQ(r["sandbox"]["write_xor_execute"], !allowed);
  }
}

}  // namespace
