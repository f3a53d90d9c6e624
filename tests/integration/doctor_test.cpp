// `kbench doctor` through the real binary, on the machine the tests run on: it says which target it
// looked at and why, reports what the cuda target needs when there is no GPU (or the GPU and its
// clocks when there is one), and its exit code is the one docs/cli.md gives. The judgement itself
// on invented machines: tests/unit/test_doctor.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "cli_test_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using kb::test::kbench;

// The NVIDIA kernel module is loaded (the driver lists GPUs through it).
bool machine_has_nvidia_driver() { return fs::exists("/proc/driver/nvidia/version") || fs::exists("/dev/nvidia0"); }

const json& check(const json& report, const std::string& name) {
  for (const json& c : report["checks"])
    if (c["name"] == name) return c;
  throw std::runtime_error("no check named " + name + " in " + report.dump());
}

}  // namespace

TEST(DoctorCli, JsonReportAndExitCodeAgree) {
  const auto r = kbench({"doctor", "--json"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  const json j = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["exit_code"], r.exit_code);
  EXPECT_EQ(j["ready"], r.exit_code == 0);
  EXPECT_EQ(j["blocking"].empty(), r.exit_code == 0);
  for (const json& c : j["checks"]) {
    // Every piece that is not there says how to get it.
    if (c["status"] == "missing") EXPECT_FALSE(c["fix"].get<std::string>().empty()) << c.dump();
    if (c["status"] == "ok") EXPECT_TRUE(c["fix"].get<std::string>().empty()) << c.dump();
    // And every blocking one is a required one that is missing.
    if (c["required"] == true && c["status"] == "missing")
      EXPECT_NE(std::find(j["blocking"].begin(), j["blocking"].end(), c["name"]), j["blocking"].end()) << c.dump();
  }
  for (const char* area : {"evaluation", "host target", "cuda target", "agent runs", "sweeps", "results"}) {
    bool seen = false;
    for (const json& c : j["checks"]) seen = seen || c["area"] == area;
    EXPECT_TRUE(seen) << area;
  }
}

TEST(DoctorCli, WithoutAGpuItLooksAtTheHostTargetAndSaysWhatCudaNeeds) {
  if (machine_has_nvidia_driver()) GTEST_SKIP() << "this machine has an NVIDIA driver: see OnAGpuMachine...";
  const auto r = kbench({"doctor"});
  EXPECT_NE(r.output.find("kbench doctor: the host target (no NVIDIA GPU on this machine)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no NVIDIA GPU on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fix: run on a machine with an NVIDIA GPU (sm_80 or newer); here, use --target host"), std::string::npos)
      << r.output;

  const auto jr = kbench({"doctor", "--json"});
  const json j = json::parse(jr.output.substr(jr.output.find('{')));
  EXPECT_EQ(j["target"], "host");
  const json& gpu = check(j, "GPU");
  EXPECT_EQ(gpu["status"], "missing");
  EXPECT_EQ(gpu["required"], false);
  EXPECT_EQ(check(j, "NVIDIA driver")["status"], "missing");
  EXPECT_EQ(check(j, "CUDA runtime")["status"], "missing");
  // The host target's needs decide the exit code: this suite's own host tests need the same.
  const bool host_ready = check(j, "C++ compiler")["status"] == "ok" && check(j, "evaluation sandbox")["status"] == "ok" &&
                          check(j, "seccomp")["status"] == "ok" && check(j, "bubblewrap")["status"] == "ok";
  EXPECT_EQ(r.exit_code, host_ready ? 0 : 1) << r.output;
  EXPECT_NE(r.output.find(host_ready ? "Ready: everything the host target needs is here." : "Not ready for the host target"),
            std::string::npos)
      << r.output;

  // Asked about the cuda target, the same machine is not ready, and says what is missing.
  const auto cuda = kbench({"doctor", "--target", "cuda"});
  EXPECT_EQ(cuda.exit_code, 1) << cuda.output;
  EXPECT_NE(cuda.output.find("missing* GPU"), std::string::npos) << cuda.output;
  EXPECT_NE(cuda.output.find("Not ready for the cuda target: missing"), std::string::npos) << cuda.output;
}

TEST(DoctorCli, OnAGpuMachineItLooksAtTheCudaTargetAndReportsTheClocks) {
  if (!machine_has_nvidia_driver()) GTEST_SKIP() << "no NVIDIA driver on this machine";
  const auto r = kbench({"doctor", "--json"});
  const json j = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["target"], "cuda");
  const json& gpu = check(j, "GPU 0");
  EXPECT_NE(gpu["detail"].get<std::string>().find("SM clock"), std::string::npos) << gpu.dump();
  EXPECT_EQ(check(j, "NVIDIA driver")["status"], "ok");
}

TEST(DoctorCli, BadOptionsAreUsageErrorsAndAnUnwritableRunsFolderIsReported) {
  const auto bad = kbench({"doctor", "--target", "rocm"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--target"), std::string::npos) << bad.output;

  // A file where the runs folder should be.
  const fs::path file = fs::temp_directory_path() / ("kbench-doctor-test-" + std::to_string(::getpid()));
  std::ofstream(file) << "not a folder";
  const auto r = kbench({"doctor", "--json", "--runs-dir", file.string()});
  fs::remove(file);
  const json j = json::parse(r.output.substr(r.output.find('{')));
  const json& runs = check(j, "runs folder");
  EXPECT_EQ(runs["status"], "warning") << runs.dump();
  EXPECT_NE(runs["detail"].get<std::string>().find("it is a file, not a folder"), std::string::npos) << runs.dump();
  EXPECT_NE(runs["fix"].get<std::string>().find("--runs-dir"), std::string::npos) << runs.dump();
}
