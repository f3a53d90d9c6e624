#include "sweep/slurm_executor.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <set>
#include <sstream>

#include "core/subprocess.h"
#include "core/atomic_file.h"
#include "target/target.h"

namespace kb {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool on_path(const std::string& tool) {
  return run_command({"sh", "-c", "command -v " + tool}, std::chrono::seconds(10)).exit_code == 0;
}

class SlurmExecutor : public Executor {
 public:
  explicit SlurmExecutor(const SweepSpec& s) : s_(s) {
    try {
      target_ = make_target(s.target)->name();
    } catch (const std::exception&) {
      target_ = s.target;
    }
  }
  ~SlurmExecutor() override = default;

  std::string name() const override { return "slurm"; }
  int free_slots() const override { return INT_MAX / 2; }  // the cluster queues; the array's %N throttles
  std::string describe() const override {
    return fmt::format("sbatch arrays{}{}", s_.slurm.partition.empty() ? "" : " on partition " + s_.slurm.partition,
                       s_.slurm.max_parallel ? fmt::format(", {} at a time", s_.slurm.max_parallel) : "");
  }

  std::string start(const CellLaunch& l) override {
    pending_.push_back(l);
    return "slurm (queued)";
  }

  void flush() override {
    if (pending_.empty()) return;
    const fs::path dir = s_.runs_dir / "_slurm";
    fs::create_directories(dir);
    const std::string tag = fmt::format("{}-{}-{}", s_.name, getpid(), ++batches_);
    const fs::path script = dir / (tag + ".sh");
    std::ostringstream sh;
    sh << "#!/bin/sh\n# kbench sweep " << s_.name << ": one cell per array task (written by kbench, docs/sweeps.md)\n"
       << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
    for (size_t i = 0; i < pending_.size(); ++i) {
      sh << "  " << i << ") exec";
      for (const auto& a : pending_[i].argv) sh << ' ' << shell_quote(a);
      sh << " >>" << shell_quote(pending_[i].log.string()) << " 2>&1 ;;\n";
    }
    sh << "  *) echo \"kbench: no cell for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n";
    write_file_atomically(script, sh.str());
    fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    for (const auto& l : pending_) fs::create_directories(l.log.parent_path());
    const auto cmd = sbatch_command(s_, target_, static_cast<int>(pending_.size()), script.string(),
                                    (dir / (tag + "_%a.out")).string());
    const CommandResult r = run_command(cmd, std::chrono::minutes(2));
    if (r.exit_code != 0) {
      // Every cell of the batch ends here as a failure to start (an infrastructure failure).
      for (auto& l : pending_) failed_.push_back(CellExit{l.cell, "slurm", "sbatch failed: " + r.output});
      pending_.clear();
      return;
    }
    std::string job = r.output.substr(0, r.output.find_first_of(";\n"));
    while (!job.empty() && std::isspace(static_cast<unsigned char>(job.back()))) job.pop_back();
    for (size_t i = 0; i < pending_.size(); ++i) tasks_[fmt::format("{}_{}", job, i)] = pending_[i].cell;
    jobs_.insert(job);
    pending_.clear();
    last_poll_ = {};  // look at once
  }

  std::vector<CellExit> poll() override {
    std::vector<CellExit> out;
    out.swap(failed_);
    if (tasks_.empty() || Clock::now() - last_poll_ < std::chrono::seconds(3)) return out;
    last_poll_ = Clock::now();
    std::string ids;
    for (const auto& j : jobs_) ids += (ids.empty() ? "" : ",") + j;
    // -r: one line per array task ("1234_5"), pending ones included.
    const CommandResult q = run_command({"squeue", "-h", "-r", "-j", ids, "-o", "%i %T"}, std::chrono::minutes(1));
    if (q.exit_code != 0) {
      // squeue forgets a job some time after it ended and then refuses its id: "Invalid job id".
      if (q.output.find("Invalid job id") == std::string::npos) return out;
    }
    std::set<std::string> alive;
    std::istringstream in(q.exit_code == 0 ? q.output : "");
    for (std::string line; std::getline(in, line);) {
      std::istringstream l(line);
      std::string id, state;
      l >> id >> state;
      if (!id.empty()) alive.insert(id);
    }
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if (alive.count(it->first)) {
        ++it;
        continue;
      }
      CellExit x{it->second, "job " + it->first, ""};
      const std::string state = sacct_state(it->first);
      if (!state.empty() && state != "COMPLETED" && state != "FAILED") x.note = "slurm: " + state;
      out.push_back(std::move(x));
      it = tasks_.erase(it);
    }
    std::set<std::string> live_jobs;
    for (const auto& [task, _] : tasks_) live_jobs.insert(task.substr(0, task.find('_')));
    jobs_ = live_jobs;
    return out;
  }

  void stop_all() override {
    for (const auto& j : jobs_) (void)run_command({"scancel", j}, std::chrono::minutes(1));
    for (auto& l : pending_) failed_.push_back(CellExit{l.cell, "slurm", "not submitted: the sweep was stopped"});
    pending_.clear();
  }

  int in_flight() const override { return static_cast<int>(tasks_.size() + pending_.size() + failed_.size()); }

 private:
  // How the task ended, where the cluster keeps accounting ("" otherwise).
  static std::string sacct_state(const std::string& task) {
    const CommandResult r = run_command({"sacct", "-n", "-P", "-X", "-j", task, "-o", "State"}, std::chrono::seconds(30));
    if (r.exit_code != 0) return "";
    std::string s = r.output.substr(0, r.output.find('\n'));
    return s.substr(0, s.find(' '));
  }

  SweepSpec s_;
  std::string target_;
  std::vector<CellLaunch> pending_;
  std::vector<CellExit> failed_;
  std::map<std::string, Cell> tasks_;  // "job_task" -> cell
  std::set<std::string> jobs_;
  int batches_ = 0;
  Clock::time_point last_poll_{};
};

}  // namespace

std::vector<std::string> sbatch_command(const SweepSpec& s, const std::string& target, int tasks, const std::string& script,
                                        const std::string& output_pattern) {
  const double seconds = static_cast<double>((longest_cell_budget(s) + s.grace + s.slurm.margin).count()) / 1000.0;
  const int minutes = static_cast<int>(std::ceil(seconds / 60.0));
  std::vector<std::string> a = {"sbatch", "--parsable", "--job-name", "kbench-" + s.name,
                                "--array", fmt::format("0-{}{}", tasks - 1, s.slurm.max_parallel ? fmt::format("%{}", s.slurm.max_parallel) : ""),
                                "--time", std::to_string(minutes), "--ntasks", "1", "--output", output_pattern};
  if (target == "cuda") a.push_back("--gres=gpu:1");
  if (!s.slurm.partition.empty()) a.insert(a.end(), {"--partition", s.slurm.partition});
  if (!s.slurm.account.empty()) a.insert(a.end(), {"--account", s.slurm.account});
  if (!s.slurm.qos.empty()) a.insert(a.end(), {"--qos", s.slurm.qos});
  a.insert(a.end(), s.slurm.extra_args.begin(), s.slurm.extra_args.end());
  a.push_back(script);
  return a;
}

std::unique_ptr<Executor> make_slurm_executor(const SweepSpec& s) {
  for (const char* tool : {"sbatch", "squeue", "scancel"})
    if (!on_path(tool))
      throw SweepError(fmt::format("executor slurm: `{}` is not on PATH (install Slurm's client tools, or use executor local)", tool));
  return std::make_unique<SlurmExecutor>(s);
}

}  // namespace kb
