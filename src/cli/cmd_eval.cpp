// `kbench check`, `kbench bench` and `kbench eval`: judge a solution folder.
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <iostream>

#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "cli/option_checks.h"
#include "cli/out_folder.h"
#include "cli/report.h"
#include "core/json_text.h"
#include "deck/generate.h"
#include "eval/comparator.h"
#include "eval/evaluator.h"
#include "eval/worker_sandbox.h"
#include "core/atomic_file.h"
#include "core/gpu_lock.h"
#include "target/ceilings.h"
#include "target/compile.h"
#include "target/python_solution.h"
#include "target/target.h"

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
  bool allow_exec_memory = false;
  bool in_agent_sandbox = false;
  bool samples = false;
  bool force = false;
  bool no_expected_cache = false;
  uint64_t memory_limit = 0;  // --memory-limit; 0: not given (the default follows the shape)
  EvalOptions options;
};

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// The problem, the target and the solution folder of a command that judges or builds a solution,
// checked before any work: a missing folder or file, an unsupported target and a shape index out
// of range are the user's mistakes (exit 2), never verdicts.
Problem checked_problem_and_folder(GlobalOptions& g, const EvalCommand& c) {
  resolve_defaults(g);
  Problem p = find_problem(g, c.problem);
  // What the evaluator would otherwise find only after building, and report as a verdict: a
  // generator or comparator this kbench lacks (the deck's error), the target, the shape indices.
  require_generators(p);
  require_comparators(p);
  {
    std::string target;
    try {
      target = make_target(c.target)->name();
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--target {}: {}", c.target, e.what()));
    }
    if (!p.supports(target)) throw UsageError(fmt::format("--target {}: problem {} does not support it", target, p.name));
    for (size_t i : c.shapes)
      if (i >= p.shapes.size())
        throw UsageError(fmt::format("--shape {}: out of range: {} has {} shapes (0 to {}; `kbench show {}` lists them)", i,
                                     p.name, p.shapes.size(), p.shapes.size() - 1, p.name));
  }
  if (!fs::is_directory(c.solution)) throw UsageError("solution folder " + c.solution.string() + " does not exist");
  // What the target builds must be there; a folder without it is the user's mistake, not a verdict.
  {
    std::error_code ec;
    const bool cpp = fs::is_regular_file(c.solution / "solution.cpp", ec), cu = fs::is_regular_file(c.solution / "solution.cu", ec);
    // solution.py is a Python solution on either target (docs/python-solutions.md).
    const bool py = fs::is_regular_file(c.solution / "solution.py", ec);
    if (!py && ((c.target == "host" && !cpp) || (c.target == "cuda" && !cu) || (!cpp && !cu)))
      throw UsageError(fmt::format("solution folder {} holds no {} (a solution is solution.cpp for the host target, "
                                   "solution.cu for cuda, solution.py for either; include/kbench/solution.h, "
                                   "docs/python-solutions.md)",
                                   c.solution.string(), c.target == "host" ? "solution.cpp" : c.target == "cuda" ? "solution.cu"
                                                                                                               : "solution.cpp or solution.cu"));
  }
  return p;
}

int run(const std::string& mode, EvalCommand& c, GlobalOptions& g) {
  const Problem p = checked_problem_and_folder(g, c);
  EvalOptions& o = c.options;
  if (c.memory_limit > 0) o.memory_limit_bytes = c.memory_limit;
  // The re-checked timed calls are drawn from the samples: fewer samples than re-checks would leave
  // the worker unable to re-check what the parent asked for (and fail an honest solution).
  if (mode != "check" && o.timing.max_samples < static_cast<size_t>(o.timing.rechecks))
    throw UsageError(fmt::format("--max-samples {} is below --rechecks {}: the re-checked timed calls are drawn from the "
                                 "samples; raise --max-samples or lower --rechecks",
                                 o.timing.max_samples, o.timing.rechecks));
  if (mode != "check" && o.timing.min_samples > o.timing.max_samples)
    throw UsageError(fmt::format("--min-samples {} is above --max-samples {}", o.timing.min_samples, o.timing.max_samples));
  o.check = mode != "bench";
  o.bench = mode != "check";
  o.target = c.target;
  o.shapes = c.shapes;
  o.seeds = c.seeds;
  o.secret = !c.no_secret;
  o.sandbox = !c.no_sandbox;
  o.write_xor_execute = !c.allow_exec_memory;
  o.isolate = !c.no_sandbox;
  if (o.isolate && c.in_agent_sandbox) {
    // The agent's own ./kbench check, inside the agent's sandbox: where a sandbox cannot be made
    // inside that one (bwrap nested as root), the solution runs in the agent's sandbox alone. The
    // official verdict of `kbench run` is made outside, in a sandbox of its own.
    if (const BwrapProbe probe = probe_worker_sandbox(); !probe.ok) {
      o.isolate = false;
      o.no_isolation_reason = "inside the agent's sandbox, where the evaluation sandbox cannot be nested: " + probe.error;
    }
  }
  o.hardware_dir = g.hardware_dir;
  o.build_dir = kbench_cache_dir() / "build";
  if (!c.no_expected_cache) o.expected_cache_dir = kbench_cache_dir() / "expected";
  const bool default_out = c.out.empty();  // kbench's own folder (the cache's last/, a fresh kbench-results/)
  if (default_out) {
    c.out = mode == "eval" ? fs::path("kbench-results") / fmt::format("{}-{}-{}", p.name, fs::absolute(c.solution).lexically_normal().filename().string(), timestamp())
                           : kbench_cache_dir() / "last" / p.name;
    // Two evaluations in the same second get folders of their own.
    const fs::path first = c.out;
    for (int n = 2; mode == "eval" && fs::exists(c.out / "result.json"); ++n) c.out = first.string() + fmt::format("-{}", n);
  } else if (mode == "eval" && fs::exists(c.out / "result.json") && !c.force) {
    // A recorded verdict (perhaps an agent run's) is never replaced by another evaluation's.
    throw UsageError(fmt::format("--out {}: it already holds a result.json; pick another folder, or add --force to replace it",
                                 c.out.string()));
  }
  // Never truncates a user's files: only a new or empty folder, or one kbench made (cli/out_folder.h).
  claim_out_folder(c.out, "--out", c.force || default_out);
  o.work_dir = c.out;
  const bool tty = stderr_is_terminal();
  if (!g.json) o.progress = [tty](const std::string& s) { std::cerr << (tty ? "\033[2m" : "") << s << (tty ? "\033[0m" : "") << "\n"; };
  // In a sweep with several agents per GPU, the GPU's lock (core/gpu_lock.h) for the whole job.
  const auto gpu_lock = gpu_lock_from_environment("kbench " + mode);
  EvalResult r = evaluate(p, c.solution, o);
  const auto j = to_json(r, true);
  if (mode == "eval") write_file_atomically(c.out / "result.json", kb::json_text(j) + "\n");
  if (g.json) {
    std::cout << kb::json_text(to_json(r, c.samples)) << "\n";
  } else {
    print_result(std::cout, r, stdout_is_terminal());
    if (mode == "eval") std::cout << "  result  " << (c.out / "result.json").string() << "\n";
    else std::cout << "  logs    " << c.out.string() << "\n";
  }
  return reason_row(r.finding.reason).exit_code;
}

void add_eval_command(CLI::App& app, GlobalOptions& g, int& exit_code, const std::string& mode, const std::string& help) {
  auto c = std::make_shared<EvalCommand>();
  auto* cmd = app.add_subcommand(mode, help);
  add_global_options(*cmd, g);
  cmd->add_option("PROBLEM", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("SOLUTION_DIR", c->solution, "Folder holding solution.cu / solution.cpp")->required();
  cmd->add_option("--target", c->target, "host, cuda or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_option("--shape", c->shapes, "Only these shape indices (repeatable)")->check(whole_in(0, 1000000, "(a shape index)"));
  cmd->add_option("--out", c->out, mode == "eval" ? "Result folder (default kbench-results/<problem>-<solution>-<time>)"
                                                  : "Folder for worker logs (default: the kbench cache)");
  if (mode == "eval") cmd->add_flag("--force", c->force, "Replace a result.json already in --out");
  cmd->add_option("--timeout", c->options.call_timeout,
                  "Seconds one call may take before the worker is killed (default: from the shape's size and the "
                  "baseline's time, at least 5 s; docs/evaluation.md)")
      ->transform(seconds_as_ms(0.001, 86400));
  cmd->add_option("--log-limit", c->options.log_limit_bytes,
                  "Most the solution may write to its stdout/stderr log; more fails it as log_limit (default 64M)")
      ->transform(bytes_in(1ull << 10, 1ull << 40));
  cmd->add_option("--memory-limit", c->memory_limit,
                  "The worker's data memory; an allocation beyond it fails the solution as out_of_memory (default on "
                  "host: 8x the shape's tensors + 4G, at most 3/4 of the machine's memory; none on cuda)")
      ->transform(bytes_in(64ull << 20, 1ull << 50));
  cmd->add_flag("--all-shapes", c->options.all_shapes,
                "Judge every shape even after one has failed (by default the verdict is given at the first failure)");
  if (mode == "check")
    cmd->add_option("--shape-jobs", c->options.shape_jobs,
                    "Shapes judged at once (no timing runs in a check, so they may share the GPU; default: a quarter "
                    "of the hardware threads, at most 4; 1 judges them one after another)")
        ->check(whole_in(1, 64, "shapes"));
  if (mode != "bench") {
    cmd->add_option("--seed", c->seeds, "Check these seeds instead of the problem's fixed seeds (repeatable)")
        ->check(whole_in(0, INT64_MAX, "(a seed)"));
    cmd->add_flag("--no-secret", c->no_secret, "Skip the secret seeds (to reproduce a run exactly)");
    cmd->add_flag("--no-sandbox", c->no_sandbox,
                  "Build and run the solution without its sandbox and the worker's system-call filter (debugging, or "
                  "a machine without user namespaces; result.json records it, and a verdict so obtained is not "
                  "trustworthy)");
    cmd->add_option("--repeat-calls", c->options.repeat_calls,
                    "Race check: calls repeated on identical inputs (0 skips the check)")
        ->check(whole_in(0, 64, "calls"))
        ->capture_default_str();
  }
  if (mode == "bench")
    cmd->add_flag("--no-sandbox", c->no_sandbox,
                  "Build and run the solution without its sandbox and the worker's system-call filter (result.json "
                  "records it)");
  cmd->add_flag("--no-expected-cache", c->no_expected_cache,
                "Compute every case's expected outputs, the public seeds' too, instead of reading kbench's cache of them");
  cmd->add_flag("--allow-exec-memory", c->allow_exec_memory,
                "Let the solution make memory executable after kb_setup: the worker's W^X rule off, the rest of its "
                "system-call filter on (a vendor library that loads code at its first call; result.json records "
                "sandbox.write_xor_execute = false)");
  cmd->add_flag("--in-agent-sandbox", c->in_agent_sandbox,
                "Set by an agent workspace's ./kbench: inside the agent's sandbox, judge without the evaluation sandbox "
                "where it cannot be nested");
  if (mode != "check") {
    TimingPolicy& t = c->options.timing;
    cmd->add_option("--max-time", t.max_seconds, "Seconds of sampling per shape before stopping")
        ->check(number_in(0.001, 86400, "seconds"))
        ->capture_default_str();
    cmd->add_option("--min-samples", t.min_samples, "Cold samples before the noise target may stop sampling")
        ->check(whole_in(1, 10000000, "samples"))
        ->capture_default_str();
    cmd->add_option("--max-samples", t.max_samples, "Stop after this many samples")
        ->check(whole_in(1, 10000000, "samples"))
        ->capture_default_str();
    cmd->add_option("--noise", t.target_rel_stdev, "Stop when stdev/mean of the samples falls to this")
        ->check(number_in(0, 1, "(stdev/mean)"))
        ->capture_default_str();
    cmd->add_option("--median-ci", t.target_median_ci,
                    "Stop when the median's 95% confidence interval is within this fraction of it (0: never)")
        ->check(number_in(0, 1, "(fraction of the median)"))
        ->capture_default_str();
    cmd->add_option("--min-time", t.min_seconds, "Seconds of sampling before --noise or --median-ci may stop it")
        ->check(number_in(0, 86400, "seconds"))
        ->capture_default_str();
    cmd->add_option("--warmup", t.warmup_seconds, "Seconds of warm-up calls before sampling")
        ->check(number_in(0, 60, "seconds"))
        ->capture_default_str();
    cmd->add_option("--rechecks", t.rechecks, "Timed calls whose outputs are re-checked in secret (0 skips them)")
        ->check(whole_in(0, 1000, "re-checks"))
        ->capture_default_str();
    cmd->add_option("--tail-checks", t.tail_checks,
                    "Device-wide cross-checks for work left running (the fallback when CUPTI is unavailable)")
        ->check(whole_in(0, 1000, "checks"))
        ->capture_default_str();
    cmd->add_flag("--samples", c->samples, "Include every sample in --json output");
    cmd->add_flag("--no-baseline{false}", c->options.baseline,
                  "Do not time the problem's baseline (the vendor-library reference line)");
    cmd->add_flag("--refresh-baseline", c->options.refresh_baseline,
                  "Re-time the baseline even when its cache holds it, and overwrite the cached record (the cache is "
                  "keyed on the problem, kbench's version, the device and the timing options; docs/evaluation.md)");
    cmd->add_flag("--no-blocking-kernel{false}", t.blocking_kernel,
                  "cuda: do not hold the stream with a blocking kernel (needed under Nsight Compute; launch overhead "
                  "then enters the samples)");
    cmd->add_flag("--no-hot-capture{false}", t.hot_capture,
                  "cuda: time the hot calls back to back on the stream instead of replaying them from a captured "
                  "CUDA graph (timing.hot's mode is then \"stream\": a Python solution's launch cost per call is in it)");
    cmd->add_flag("--steady-floor", t.steady_floor,
                  "Score each call as no faster than the calls' steady cost back to back on the stream with their "
                  "launches (timing.steady; always on for a Python solution on cuda, whose launch cost is its own)");
    cmd->add_flag("--no-perturb{false}", t.perturb,
                  "Time every call on its input set as generated, not perturbed (to measure what the perturbation "
                  "costs; a result so obtained does not rule out a result cache)");
  }
  cmd->callback([c, &g, &exit_code, mode] { exit_code = run(mode, *c, g); });
}

// `kbench build`: the solution compiled into kbench's build cache, as `check`, `bench` and `eval`
// build it (same flags, same sandbox, same cache key), and nothing run. An agent learns whether its
// code compiles without a GPU's time; a corpus or sweep builds every solution on the CPUs first, in
// parallel, while the GPU judges the ones already built (tests/benchmarks/corpus).
int run_build(EvalCommand& c, GlobalOptions& g) {
  const Problem p = checked_problem_and_folder(g, c);
  const fs::path solution_dir = fs::absolute(c.solution).lexically_normal();
  std::unique_ptr<Target> target = make_target(c.target);
  if (is_python_solution(solution_dir, target->source_file()))
    if (const auto why = python_unavailable_reason(target->name()))
      throw UsageError(fmt::format("{}: Python solutions are unavailable on the {} target: {}", c.solution.string(),
                                   target->name(), *why));
  const BuildOptions bo = solution_build_options(p, /*sandbox=*/!c.no_sandbox);
  if (bo.sandbox)
    if (const BwrapProbe probe = probe_worker_sandbox(); !probe.ok)
      throw UsageError(probe.error + ". kbench builds a solution only in a sandbox; pass --no-sandbox to build without one");
  const bool tty = stderr_is_terminal();
  if (!g.json) std::cerr << (tty ? "\033[2m" : "") << "building " << solution_dir.string() << (tty ? "\033[0m" : "") << "\n";
  const BuildResult b = target->build(solution_dir, kbench_cache_dir() / "build", bo);
  if (g.json) {
    nlohmann::json j = {{"problem", p.name},      {"solution_dir", solution_dir.string()},
                        {"target", target->name()}, {"ok", b.ok},
                        {"cached", b.cached},        {"seconds", b.seconds},
                        {"command", b.command},      {"library", b.ok ? b.library.string() : ""},
                        {"log", b.ok ? "" : trim_compiler_log(b.log)}};
    std::cout << kb::json_text(j) << "\n";
  } else if (b.ok) {
    std::cout << fmt::format("built {} for {} ({}): {}\n", solution_dir.filename().string(), target->name(),
                             b.cached ? "from the build cache" : fmt::format("{:.1f} s", b.seconds), b.library.string());
  } else {
    std::cout << fmt::format("build FAILED: {} for {}\n  command {}\n{}\n", solution_dir.filename().string(),
                             target->name(), b.command, trim_compiler_log(b.log));
  }
  return b.ok ? kExitPass : kExitFail;
}

}  // namespace

void register_build_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<EvalCommand>();
  auto* cmd = app.add_subcommand("build", "Compile a solution into kbench's build cache, as check/bench/eval would; run nothing");
  add_global_options(*cmd, g);
  cmd->add_option("PROBLEM", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("SOLUTION_DIR", c->solution, "Folder holding solution.cu / solution.cpp / solution.py")->required();
  cmd->add_option("--target", c->target, "host, cuda or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_flag("--no-sandbox", c->no_sandbox, "Run the compiler as kbench instead of in the build sandbox");
  cmd->callback([c, &g, &exit_code] { exit_code = run_build(*c, g); });
}

void register_eval_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_eval_command(app, g, exit_code, "check", "Check a solution's correctness on fixed and secret seeds");
  add_eval_command(app, g, exit_code, "bench", "Time a solution (cold, cache flushed) and score it on the roofline");
  add_eval_command(app, g, exit_code, "eval", "check + bench; writes result.json");
}

}  // namespace kb::cli
