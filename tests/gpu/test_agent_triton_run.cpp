// An agent run that answers in Triton, judged end to end on the GPU (issue 20; docs/python-solutions.md,
// "Agents"): `kbench run` of kbench's own agent loop on the cuda target, against the gateway in
// replay mode. The scripted model writes solution.py (a Triton softmax, the kernel in the file
// itself: an agent's workspace gets no problem kit), deletes the C++ and Python starters with bash,
// and submits (the loop's submit runs ./kbench check in the sandbox). The run must collect
// solution.py and judge it in full, timing included: pass. Skipped without a GPU or where Python
// solutions are unavailable on cuda (the reason is printed).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "agent/sandbox.h"
#include "agent_test_util.h"
#include "core/subprocess.h"
#include "target/python_solution.h"
#include "target/target.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// The deck's honest Triton softmax as one file: the kit's kernel module, then the solution with its
// import of the kit removed and the kernel called by its own name.
std::string standalone_triton_softmax() {
  std::string solution = kbtest::slurp(kSource / "problems/softmax/solutions/triton-softmax/solution.py");
  replace_all(solution, "import softmax_triton\n", "");
  replace_all(solution, "softmax_triton.softmax_rows", "softmax_rows");
  return kbtest::slurp(kSource / "problems/softmax/kit/softmax_triton.py") + "\n\n" + solution;
}

json turn(const std::string& text, const std::string& tool, const json& input) {
  return {{"api", "openai_chat"},
          {"text", text},
          {"tool_calls", json::array({{{"name", tool}, {"input", input}}})},
          {"usage", {{"input_tokens", 1000}, {"output_tokens", 100}}}};
}

}  // namespace

TEST(AgentTritonRun, KbenchsLoopWritesATritonSoftmaxAndTheRunJudgesItOnTheGpu) {
  if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  if (const auto why = kb::python_unavailable_reason("cuda")) GTEST_SKIP() << "Python solutions unavailable on cuda: " << *why;
  if (!kb::probe_sandbox().ok) GTEST_SKIP() << kb::probe_sandbox().error;
  const fs::path root = kbtest::scratch("agent-triton");
  const std::string solution = standalone_triton_softmax();
  ASSERT_NE(solution.find("@triton.jit"), std::string::npos);
  const json script = json::array(
      {turn("A Triton kernel: one program per row, an online max and sum, then the normalisation.", "write_file",
            {{"path", "solution.py"}, {"content", solution}}),
       turn("Removing the starters, so that solution.py is the one judged.", "bash",
            {{"command", "rm -f solution.cu solution.cpp starter.py && ls"}}),
       turn("Submitting.", "submit", json::object())});
  {
    std::ofstream(root / "script.json") << script.dump(2);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const kb::CommandResult r = kb::run_command(
      {KBENCH_BINARY, "run", "--agent", "kbench", "--model", "loop-test", "--problem", "softmax", "--target", "cuda",
       "--budget", "6m", "--runs-dir", (root / "runs").string(), "--gateway", "replay:" + (root / "script.json").string()},
      std::chrono::minutes(9));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<fs::path> runs = kbtest::run_dirs(root / "runs");
  ASSERT_EQ(runs.size(), 1u);
  const fs::path run = runs[0];
  EXPECT_EQ(kbtest::slurp(run / "solution/solution.py"), solution) << "the run judges the file the model wrote";
  EXPECT_FALSE(fs::exists(run / "solution/solution.cu"));
  const json result = json::parse(kbtest::slurp(run / "result.json"));
  EXPECT_EQ(result["verdict"], "pass") << result.dump(2).substr(0, 4000);
  EXPECT_EQ(result["mode"], "eval") << "judged in full, timing included";
  EXPECT_EQ(result["timing_policy"]["steady_floor"], true) << "a Python solution is scored with its launches";
  ASSERT_TRUE(result["shapes"].is_array() && !result["shapes"].empty());
  const json& timing = result["shapes"][0]["timing"];
  ASSERT_TRUE(timing.contains("steady")) << timing.dump(2);
  // The score is at least the steady cost per call, launches included.
  EXPECT_GE(timing["median"].get<double>(), timing["steady"]["seconds"].get<double>());
  const json rec = json::parse(kbtest::slurp(run / "run.json"));
  EXPECT_EQ(rec["verdict"]["verdict"], "pass");
  EXPECT_EQ(rec["status"], "complete") << rec.dump(2).substr(0, 4000);
  std::cerr << "agent run with a Triton solution took " << took << " s\n";
  fs::remove_all(root);
}
