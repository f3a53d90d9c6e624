// A run directory: everything one agent run leaves behind, under
// runs/<UTC timestamp>_<agent>_<model>_<problem>_<trial>/ (docs/agent-runs.md lists the files).
//
// run.json is the run's record. It is written at the start with status "running" and rewritten
// (atomically: temporary file + rename) at each step, so a reader never sees half a record; a run
// that ends any other way than by finishing is "incomplete", never a run with a half-written
// result.json. If kbench is stopped by a signal, IncompleteOnSignal writes the "incomplete" record
// from the signal handler; if it is killed outright (SIGKILL, power loss), the record still says
// "running", and effective_status() reads it as "incomplete" once the process is gone.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kb {

inline constexpr const char* kRunSchema = "kbench.run/1";

namespace run_status {
inline constexpr const char* running = "running";
inline constexpr const char* complete = "complete";                // the agent finished; the solution was judged
inline constexpr const char* incomplete = "incomplete";            // stopped before the end: no verdict
inline constexpr const char* killed_at_budget = "killed_at_budget";  // the agent was stopped at its budget, then judged
}  // namespace run_status

struct RunKey {
  std::string agent;
  std::string model;
  std::string problem;
  int trial = 1;
};

// "20261121T170102Z": sortable, and free of ':' (which some filesystems and tools reject).
std::string utc_timestamp(std::chrono::system_clock::time_point t);
// "2026-11-21T17:01:02Z"
std::string iso_utc(std::chrono::system_clock::time_point t);
// Keeps [A-Za-z0-9.+-]; any other run of characters becomes one '-' ("org/model:v1" -> "org-model-v1").
std::string path_component(std::string_view s);
std::string run_dir_name(const RunKey& key, std::chrono::system_clock::time_point t);

class RunDir {
 public:
  // Creates runs_root/<name> (and runs_root). Throws std::runtime_error when that folder exists:
  // two runs never share one.
  static RunDir create(const std::filesystem::path& runs_root, const RunKey& key,
                       std::chrono::system_clock::time_point t = std::chrono::system_clock::now());
  // The same with a name chosen by the caller (a sweep names its attempts before they start).
  static RunDir create_named(const std::filesystem::path& runs_root, const std::string& name);
  explicit RunDir(std::filesystem::path path) : path_(std::move(path)) {}

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  std::filesystem::path record_file() const { return path_ / "run.json"; }

  void write_record(const nlohmann::json& record) const;            // run.json, atomically
  void write_json(std::string_view name, const nlohmann::json& j) const;  // any file, atomically
  nlohmann::json read_record() const;  // throws std::runtime_error naming the file

 private:
  std::filesystem::path path_;
};

// The status a reader should believe: "running" in a record whose process (pid and start time
// recorded by process_identity()) no longer exists on this host is "incomplete".
std::string effective_status(const nlohmann::json& record);
// {"hostname", "pid", "pid_start"}: enough to tell later whether this process still runs.
nlohmann::json process_identity();

// While alive, SIGINT, SIGTERM and SIGHUP write `incomplete_record` to run.json (atomically, with
// async-signal-safe calls only) and then end kbench as the signal would have.
class IncompleteOnSignal {
 public:
  IncompleteOnSignal(const RunDir& run, const nlohmann::json& incomplete_record);
  ~IncompleteOnSignal();
  // Replaces the record the handler writes (call after each change of run.json).
  void update(const nlohmann::json& incomplete_record);
  IncompleteOnSignal(const IncompleteOnSignal&) = delete;
  IncompleteOnSignal& operator=(const IncompleteOnSignal&) = delete;
};

}  // namespace kb
