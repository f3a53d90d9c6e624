// Run directories: names, exclusive creation, atomic records, and telling a dead "running" run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "store/run_dir.h"

#include "test_support.h"

namespace fs = std::filesystem;
using namespace kb;

namespace {
fs::path temp_dir(const std::string& name) { return testing_support::fresh_temp_dir(name); }
}  // namespace

TEST(RunDir, NameIsUtcTimestampAgentModelProblemTrial) {
  const auto t = std::chrono::system_clock::from_time_t(1700000000);  // 2023-11-14 22:13:20 UTC
  EXPECT_EQ(utc_timestamp(t), "20231114T221320Z");
  EXPECT_EQ(iso_utc(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(run_dir_name(RunKey{"generic", "anthropic/claude:opus 4", "softmax", 3}, t),
            "20231114T221320Z_generic_anthropic-claude-opus-4_softmax_3");
  EXPECT_EQ(path_component("../.."), "none");
  EXPECT_EQ(path_component(".hidden"), "hidden");
}

TEST(RunDir, TwoRunsNeverShareAFolder) {
  const fs::path root = temp_dir("rundir-excl");
  const auto t = std::chrono::system_clock::now();
  RunDir a = RunDir::create(root, RunKey{"generic", "m", "softmax", 1}, t);
  EXPECT_TRUE(fs::is_directory(a.path()));
  try {
    RunDir::create(root, RunKey{"generic", "m", "softmax", 1}, t);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--trial"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(RunDir::create(root, RunKey{"generic", "m", "softmax", 2}, t));
  fs::remove_all(root);
}

TEST(RunDir, RecordIsWrittenWholeAndLeavesNoTemporaryFile) {
  const fs::path root = temp_dir("rundir-record");
  RunDir r = RunDir::create(root, RunKey{"generic", "m", "softmax", 1});
  r.write_record({{"status", "running"}});
  r.write_record({{"status", "complete"}, {"n", 2}});
  EXPECT_EQ(r.read_record()["status"], "complete");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(r.path())) ++files;
  EXPECT_EQ(files, 1u);
  fs::remove_all(root);
}

TEST(RunDir, RunningRecordOfAVanishedProcessReadsIncomplete) {
  nlohmann::json alive = {{"status", "running"}, {"process", process_identity()}};
  EXPECT_EQ(effective_status(alive), "running");
  // A child's identity, taken while it lives, then the child is gone.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    const std::string id = process_identity().dump();
    (void)!write(fds[1], id.data(), id.size());
    _exit(0);
  }
  close(fds[1]);
  std::string id;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) id.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  nlohmann::json dead = {{"status", "running"}, {"process", nlohmann::json::parse(id)}};
  EXPECT_EQ(effective_status(dead), "incomplete");
  EXPECT_EQ(effective_status({{"status", "complete"}}), "complete");
}

TEST(RunDir, SignalDuringTheRunLeavesTheRecordIncomplete) {
  const fs::path root = temp_dir("rundir-signal");
  RunDir r = RunDir::create(root, RunKey{"generic", "m", "softmax", 1});
  r.write_record({{"status", "running"}});
  pid_t pid = fork();
  if (pid == 0) {
    IncompleteOnSignal guard(r, {{"status", "incomplete"}, {"why", "first"}});
    guard.update({{"status", "incomplete"}, {"why", "second"}});
    raise(SIGTERM);
    _exit(0);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  const auto rec = r.read_record();
  EXPECT_EQ(rec["status"], "incomplete");
  EXPECT_EQ(rec["why"], "second");
  fs::remove_all(root);
}
