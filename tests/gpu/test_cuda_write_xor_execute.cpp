// W^X on the cuda target (docs/threat-model.md, guarantee 7), on a real GPU:
//  - kbench's own device work and a solution's runtime calls run under the worker's filter with
//    W^X on, under lazy module loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2:
//    a kernel's code is loaded at its first launch, after the filter) and eager loading alike, so
//    kbench leaves the loading mode to the user; making a page executable after the filter is
//    killed (write_xor_execute_probe.cpp);
//  - the same through `kbench eval`: the honest cuda softmax passes with W^X recorded on in
//    result.json, and the CUDA twins of the host's W^X exploits fail as sandbox_violation
//    (`--allow-exec-memory`, the escape hatch, is tested on both targets in
//    tests/integration/eval_sandbox_test.cpp).
// Every cuda solution of the deck runs under the rule in the cuda corpus (label gpu) as well.
// Skipped (reported skipped by ctest) without a GPU.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "target/target.h"

extern char** environ;

namespace fs = std::filesystem;

namespace {

constexpr int kNoGpu = 77;  // write_xor_execute_probe.cpp's exit without a GPU

// This process's environment with CUDA_MODULE_LOADING set to `loading` (or removed when empty).
std::vector<std::string> environment_with_loading(const std::string& loading) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("CUDA_MODULE_LOADING=", 0) != 0) env.emplace_back(*e);
  if (!loading.empty()) env.push_back("CUDA_MODULE_LOADING=" + loading);
  return env;
}

kb::CommandResult probe(const std::string& mode, const std::string& loading) {
  const auto env = environment_with_loading(loading);
  return kb::run_command({KBENCH_WX_PROBE, mode}, std::chrono::minutes(2), {}, &env);
}

class WriteXorExecuteProbe : public testing::TestWithParam<std::string> {};

TEST_P(WriteXorExecuteProbe, DeviceWorkAfterSetupNeedsNoExecutableMemory) {
  const std::string loading = GetParam();
  const kb::CommandResult r = probe("honest", loading);
  if (r.exit_code == kNoGpu) GTEST_SKIP() << "no CUDA GPU on this machine";
  EXPECT_EQ(r.signal, 0) << "killed (SIGSYS is the filter: something mapped executable memory after setup):\n"
                         << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The mode asked for is the mode the driver used: lazy loading really loaded the kernel late.
  std::string want = loading;
  for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_NE(r.output.find("module loading: " + want), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(ModuleLoading, WriteXorExecuteProbe, testing::Values("LAZY", "EAGER"));

TEST(WriteXorExecuteProbeExploit, MakingAPageExecutableAfterSetupIsKilled) {
  const kb::CommandResult r = probe("exec-after-setup", "LAZY");
  if (r.exit_code == kNoGpu) GTEST_SKIP() << "no CUDA GPU on this machine";
  EXPECT_EQ(r.signal, SIGSYS) << r.output;
}

// `kbench eval` of a softmax solution on the cuda target; its result.json.
nlohmann::json evaluate(const std::string& solution, const std::string& loading, const std::string& name) {
  const fs::path out = fs::temp_directory_path() / ("kbench-wx-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(out);
  std::vector<std::string> argv = {KBENCH_BINARY, "eval", "softmax",
                                   std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/" + solution,
                                   "--target", "cuda", "--json", "--out", out.string(), "--no-baseline",
                                   "--max-time", "0.2", "--min-samples", "5", "--warmup", "0.02"};
  const auto env = environment_with_loading(loading);
  const kb::CommandResult r = kb::run_command(argv, std::chrono::minutes(5), {}, &env);
  std::ifstream in(out / "result.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(out);
  if (j.is_discarded()) ADD_FAILURE() << "no result.json: " << r.output;
  return j;
}

class WriteXorExecuteEval : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  }
};

TEST_P(WriteXorExecuteEval, TheHonestCudaSoftmaxPassesWithTheRuleOn) {
  const auto j = evaluate("cuda-fast", GetParam(), "honest-" + GetParam());
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.value("verdict", ""), "pass") << j.value("message", "");
  EXPECT_TRUE(j["sandbox"].value("seccomp", false));
  EXPECT_TRUE(j["sandbox"].value("write_xor_execute", false));
}

INSTANTIATE_TEST_SUITE_P(ModuleLoading, WriteXorExecuteEval, testing::Values("LAZY", "EAGER"));

TEST_F(WriteXorExecuteEval, ExecutableMemoryAfterSetupFailsAsSandboxViolation) {
  for (const char* exploit : {"exploit-cuda-jit-toggle", "exploit-cuda-rwx-page"}) {
    const auto j = evaluate(exploit, "", exploit);
    ASSERT_TRUE(j.is_object()) << exploit;
    EXPECT_EQ(j.value("failure", ""), "sandbox_violation") << exploit << ": " << j.value("message", "");
  }
}

}  // namespace
