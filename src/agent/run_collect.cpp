// The stage after the agent's turn (agent/run_stages.h): what the agent left is taken into the run
// directory -- its transcript normalized into events, its solution copied to solution/, and its
// workspace archived and removed.
#include "agent/run_stages.h"
#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// Removes a folder the agent may have made hard to remove (folders without write permission).
std::string remove_tree(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!ec) return "";
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  ec.clear();
  fs::remove_all(dir, ec);
  return ec ? ec.message() : "";
}

void normalize_transcript(const RunPlan& plan, OpenRun& run, const AgentTurn& turn) {
  try {
    const auto events = plan.adapter->normalize(turn.transcript);
    write_events_jsonl(run / "transcript" / "events.jsonl", events);
    // What the agent's own output says it used; usage.json has the gateway's count.
    run.record.transcript = TranscriptRecord{events.size(), transcript_usage(events)};
  } catch (const std::exception& e) {
    run.record.transcript_error = e.what();
  }
}

void take_solution(const RunPlan& plan, OpenRun& run, const PreparedRun& prepared) {
  const SolutionLimits limits;
  const std::string target = plan.target->name();
  run.record.solution_notes = copy_solution(prepared.workspace.dir, target, run / "solution", limits);
  run.record.solution_limits = limits;
  std::vector<std::string> files;
  for (const auto& f : solution_files(run / "solution", target)) files.push_back(f.filename().string());
  run.record.solution_files = std::move(files);
}

void archive_workspace(OpenRun& run, const PreparedRun& prepared) {
  const fs::path tmp = run / "workspace.tar.gz.tmp";
  const CommandResult tar =
      run_command({"tar", "--sparse", "-czf", tmp.string(), "-C", run.dir().path().string(), "workspace"}, std::chrono::minutes(10));
  if (tar.exit_code == 0 && !tar.timed_out) {
    fs::rename(tmp, run / "workspace.tar.gz");
    // The archive is the record of the workspace; the folder itself can be large (builds).
    if (std::string err = remove_tree(prepared.workspace.dir); !err.empty()) run.record.workspace_cleanup_error = err;
  } else {
    fs::remove(tmp);
    run.record.archive_error = "tar failed (" +
                               (tar.timed_out ? std::string("timed out") : "exit code " + std::to_string(tar.exit_code)) +
                               "): " + tar.output + "; the workspace folder is kept";
  }
}

}  // namespace

void collect_work(const RunPlan& plan, OpenRun& run, const PreparedRun& prepared, const AgentTurn& turn) {
  run.step = "collecting the agent's work";
  run.save();
  normalize_transcript(plan, run, turn);
  take_solution(plan, run, prepared);
  archive_workspace(run, prepared);
}

}  // namespace kb
