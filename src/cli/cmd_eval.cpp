// `kbench check`, `kbench bench` and `kbench eval`: judge a solution folder.
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <iostream>

#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "cli/report.h"
#include "eval/evaluator.h"
#include "sweep/gpu_lock.h"
#include "target/ceilings.h"

namespace kb::cli {
namespace fs = std::filesystem;

namespace {

struct EvalCommand {
  std::string problem;
  fs::path solution;
  fs::path out;
  std::string target = "auto";
  std::vector<size_t> shapes;
  std::vector<uint64_t> seeds;
  bool no_secret = false;
  bool no_sandbox = false;
  bool samples = false;
  EvalOptions options;
};

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// Writes the file through a temporary and a rename, so a reader never sees half a result.
void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

int run(const std::string& mode, EvalCommand& c, GlobalOptions& g) {
  resolve_defaults(g);
  Problem p = find_problem(g, c.problem);
  if (!fs::is_directory(c.solution)) throw UsageError("solution folder " + c.solution.string() + " does not exist");
  EvalOptions& o = c.options;
  o.check = mode != "bench";
  o.bench = mode != "check";
  o.target = c.target;
  o.shapes = c.shapes;
  o.seeds = c.seeds;
  o.secret = !c.no_secret;
  o.sandbox = !c.no_sandbox;
  o.hardware_dir = g.hardware_dir;
  o.build_dir = kbench_cache_dir() / "build";
  if (c.out.empty())
    c.out = mode == "eval" ? fs::path("kbench-results") / fmt::format("{}-{}-{}", p.name, fs::absolute(c.solution).lexically_normal().filename().string(), timestamp())
                           : kbench_cache_dir() / "last" / p.name;
  o.work_dir = c.out;
  fs::create_directories(o.work_dir);
  const bool tty = stderr_is_terminal();
  if (!g.json) o.progress = [tty](const std::string& s) { std::cerr << (tty ? "\033[2m" : "") << s << (tty ? "\033[0m" : "") << "\n"; };
  // In a sweep with several agents per GPU, the GPU's lock (sweep/gpu_lock.h) for the whole job.
  const auto gpu_lock = gpu_lock_from_environment("kbench " + mode);
  EvalResult r = evaluate(p, c.solution, o);
  const auto j = to_json(r, true);
  if (mode == "eval") write_atomically(c.out / "result.json", j.dump(2) + "\n");
  if (g.json) {
    std::cout << to_json(r, c.samples).dump(2) << "\n";
  } else {
    print_result(std::cout, r, stdout_is_terminal());
    if (mode == "eval") std::cout << "  result  " << (c.out / "result.json").string() << "\n";
    else std::cout << "  logs    " << c.out.string() << "\n";
  }
  if (r.verdict == "pass") return kExitPass;
  if (r.verdict == "fail") return kExitFail;
  return r.failure == "unsupported_target" || r.failure == "bad_shape" ? kExitUsage : kExitInternal;
}

void add_eval_command(CLI::App& app, GlobalOptions& g, int& exit_code, const std::string& mode, const std::string& help) {
  auto c = std::make_shared<EvalCommand>();
  auto* cmd = app.add_subcommand(mode, help);
  add_global_options(*cmd, g);
  cmd->add_option("PROBLEM", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("SOLUTION_DIR", c->solution, "Folder holding solution.cu / solution.cpp")->required();
  cmd->add_option("--target", c->target, "host, cuda or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_option("--shape", c->shapes, "Only these shape indices (repeatable)");
  cmd->add_option("--out", c->out, mode == "eval" ? "Result folder (default kbench-results/<problem>-<solution>-<time>)"
                                                  : "Folder for worker logs (default: the kbench cache)");
  cmd->add_option("--timeout", c->options.call_timeout, "Seconds one call may take before the worker is killed")
      ->transform([](std::string s) { return std::to_string(std::stoll(s) * 1000); })
      ->capture_default_str();
  if (mode != "bench") {
    cmd->add_option("--seed", c->seeds, "Check these seeds instead of the problem's fixed seeds (repeatable)");
    cmd->add_flag("--no-secret", c->no_secret, "Skip the secret seeds (to reproduce a run exactly)");
    cmd->add_flag("--no-sandbox", c->no_sandbox,
                  "Run the solution without the worker's system-call filter (debugging; a verdict so obtained is "
                  "not trustworthy)");
    cmd->add_option("--repeat-calls", c->options.repeat_calls,
                    "Race check: calls repeated on identical inputs (0 skips the check)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
  }
  if (mode != "check") {
    TimingPolicy& t = c->options.timing;
    cmd->add_option("--max-time", t.max_seconds, "Seconds of sampling per shape before stopping")->capture_default_str();
    cmd->add_option("--min-samples", t.min_samples, "Cold samples before the noise target may stop sampling")->capture_default_str();
    cmd->add_option("--max-samples", t.max_samples, "Stop after this many samples")->capture_default_str();
    cmd->add_option("--noise", t.target_rel_stdev, "Stop when stdev/mean of the samples falls to this")->capture_default_str();
    cmd->add_option("--warmup", t.warmup_seconds, "Seconds of warm-up calls before sampling")->capture_default_str();
    cmd->add_option("--rechecks", t.rechecks, "Timed calls whose outputs are re-checked in secret (0 skips them)")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    cmd->add_option("--tail-checks", t.tail_checks,
                    "Device-wide cross-checks for work left running (the fallback when CUPTI is unavailable)")
        ->check(CLI::Range(0, 1000))
        ->capture_default_str();
    cmd->add_flag("--samples", c->samples, "Include every sample in --json output");
    cmd->add_flag("--no-baseline{false}", c->options.baseline,
                  "Do not time the problem's baseline (the vendor-library reference line)");
    cmd->add_flag("--no-blocking-kernel{false}", t.blocking_kernel,
                  "cuda: do not hold the stream with a blocking kernel (needed under Nsight Compute; launch overhead "
                  "then enters the samples)");
  }
  cmd->callback([c, &g, &exit_code, mode] { exit_code = run(mode, *c, g); });
}

}  // namespace

void register_eval_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_eval_command(app, g, exit_code, "check", "Check a solution's correctness on fixed and secret seeds");
  add_eval_command(app, g, exit_code, "bench", "Time a solution (cold, cache flushed) and score it on the roofline");
  add_eval_command(app, g, exit_code, "eval", "check + bench; writes result.json");
}

}  // namespace kb::cli
