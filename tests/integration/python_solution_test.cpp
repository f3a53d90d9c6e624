// Python solutions (docs/python-solutions.md) judged by the real kbench binary, on the host target
// with CPU torch: `kbench targets` names their availability, the honest torch softmax is built and
// passes, an exception in run is a run_error quoting the traceback's last line, and a Python
// solution where Python is unavailable (KBENCH_PYTHON naming no interpreter) gets a clear verdict,
// never a crash. The corpus (corpus_test.cpp) judges the Python exploits. Skipped where Python
// solutions are unavailable, except in CI (scripts/setup installs python3-dev and python3-torch).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "loaded_machine.h"
#include "scratch_dir.h"
#include "target/python_solution.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

// `kbench <args> --json`, with `env` added to this process's environment; the JSON it printed.
json kbench_json(std::vector<std::string> args, const std::vector<std::string>& env = {},
                 kb::CommandResult* result = nullptr) {
  std::vector<std::string> argv = {"env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(KBENCH_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  // A timed evaluation the machine was too loaded to judge is judged again (loaded_machine.h).
  kb::CommandResult r = kb::test::judged([&] { return kb::run_command(argv, std::chrono::minutes(5)); }, kb::test::forget_out(args));
  const size_t brace = std::min(r.output.find('{'), r.output.find('['));
  json j = json::parse(brace == std::string::npos ? std::string() : r.output.substr(brace), nullptr, false);
  if (result) *result = std::move(r);
  return j;
}

// eval of softmax with the solution in `dir` on the host target, short timing (verdicts, not speed).
json eval_softmax(const fs::path& dir, const fs::path& out, const std::vector<std::string>& env = {},
                  kb::CommandResult* r = nullptr) {
  return kbench_json({"eval", "softmax", dir.string(), "--target", "host", "--out", out.string(), "--max-time", "0.2",
                      "--min-samples", "5", "--warmup", "0.02"},
                     env, r);
}

class PythonSolution : public testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = kb::python_unavailable_reason("host")) {
      if (std::getenv("CI")) FAIL() << "Python solutions unavailable in CI: " << *why;
      GTEST_SKIP() << "Python solutions unavailable here: " << *why;
    }
    root_ = kb::test::scratch_dir("python-solution");
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(PythonSolution, TargetsListsPythonAvailabilityWithTheInterpreter) {
  kb::CommandResult r;
  const json j = kbench_json({"targets"}, {}, &r);
  ASSERT_TRUE(j.is_array()) << r.output;
  ASSERT_FALSE(j.empty());
  const json& host = j[0];
  EXPECT_EQ(host["target"], "host");
  ASSERT_TRUE(host["python"].is_object()) << host.dump();
  EXPECT_TRUE(host["python"]["available"].get<bool>()) << host.dump();
  EXPECT_EQ(host["python"]["interpreter"], kb::configured_python().string());
  EXPECT_FALSE(host["python"].value("torch", "").empty()) << host.dump();
}

TEST_F(PythonSolution, TargetsNamesWhatIsMissingWhenTheInterpreterIsNot) {
  kb::CommandResult r;
  const json j = kbench_json({"targets"}, {"KBENCH_PYTHON=" + (root_ / "no-such-python").string()}, &r);
  ASSERT_TRUE(j.is_array()) << r.output;
  const json& py = j[0]["python"];
  EXPECT_FALSE(py["available"].get<bool>()) << py.dump();
  EXPECT_NE(py["reason"].get<std::string>().find("no-such-python"), std::string::npos) << py.dump();
}

TEST_F(PythonSolution, HonestTorchSoftmaxIsBuiltAndPasses) {
  kb::CommandResult r;
  const json j = eval_softmax(kSource / "problems/softmax/solutions/python-torch", root_ / "out", {}, &r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "pass") << j.dump(2);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The build record is the bridge's cache entry, not a compiler's.
  std::ifstream in(root_ / "out" / "result.json");
  const json result = json::parse(in, nullptr, false);
  ASSERT_TRUE(result.is_object());
  const std::string command = result["build"]["command"].get<std::string>();
  EXPECT_NE(command.find("Python solution"), std::string::npos) << command;
}

TEST_F(PythonSolution, AnExceptionInRunIsARunErrorQuotingTheTraceback) {
  const fs::path dir = root_ / "raises";
  fs::create_directories(dir);
  std::ofstream(dir / "solution.py") << "def setup(problem):\n    return None\n\n"
                                        "def run(state, inputs, outputs):\n"
                                        "    raise ZeroDivisionError('the row sum was zero on purpose')\n";
  kb::CommandResult r;
  const json j = eval_softmax(dir, root_ / "out", {}, &r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["failure"], "run_error") << j.dump(2);
  EXPECT_NE(j["message"].get<std::string>().find("ZeroDivisionError: the row sum was zero on purpose"), std::string::npos)
      << j["message"];
}

TEST_F(PythonSolution, UnavailablePythonIsAClearVerdictNotACrash) {
  kb::CommandResult r;
  const json j = eval_softmax(kSource / "problems/softmax/solutions/python-torch", root_ / "out",
                              {"KBENCH_PYTHON=" + (root_ / "no-such-python").string()}, &r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "error") << j.dump(2);
  EXPECT_EQ(j["failure"], "unsupported_target") << j.dump(2);
  const std::string message = j["message"].get<std::string>();
  EXPECT_NE(message.find("Python solutions are unavailable on the host target"), std::string::npos) << message;
  EXPECT_NE(message.find("no-such-python"), std::string::npos) << message;
}

}  // namespace
