#include "agent/agent_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "agent/budget.h"
#include "agent/gateway/gateway.h"
#include "agent/gateway/prices.h"
#include "agent/gateway/replay.h"
#include "agent/cli_install.h"
#include "agent/sandbox.h"
#include "agent/workspace.h"
#include "core/data_dir.h"
#include "core/self_executable.h"
#include "core/subprocess.h"
#include "core/version.h"
#include "eval/evaluator.h"
#include "eval/worker_sandbox.h"
#include "core/atomic_file.h"
#include "store/run_dir.h"
#include "core/gpu_lock.h"
#include "target/ceilings.h"
#include "target/target.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;
using std::chrono::milliseconds;

namespace {

double seconds(milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

bool inside(const fs::path& child, const fs::path& parent) {
  const fs::path c = fs::weakly_canonical(child), p = fs::weakly_canonical(parent);
  auto [pe, ce] = std::mismatch(p.begin(), p.end(), c.begin(), c.end());
  return pe == p.end();
}

// A read-only path an adapter asks for must not open what the sandbox exists to hide.
void check_read_only_path(const fs::path& p, const fs::path& runs_dir) {
  if (!p.is_absolute()) throw RunSetupError("--ro-bind " + p.string() + ": give an absolute path");
  if (!fs::exists(p)) throw RunSetupError("--ro-bind " + p.string() + ": no such file or folder");
  const std::pair<fs::path, const char*> hidden[] = {
      {source_dir(), "the kbench source tree"}, {data_dir(), "kbench's data folder (the deck and its solutions)"},
      {runs_dir, "the runs directory"}};
  for (const auto& [h, what] : hidden)
    if (inside(p, h) || inside(h, p))
      throw RunSetupError(fmt::format("--ro-bind {}: would show the agent {} ({})", p.string(), what, h.string()));
  // kbench's cache holds every run's build log and library; only the agents' installations in it
  // (tools/agents, cli_install.h) may be shown.
  const fs::path cache = kbench_cache_dir();
  if ((inside(p, cache) && !inside(p, agents_dir())) || inside(cache, p))
    throw RunSetupError(fmt::format("--ro-bind {}: would show the agent kbench's cache ({}), which holds other runs' "
                                    "builds and logs",
                                    p.string(), cache.string()));
  if (const char* home = std::getenv("HOME"); home && *home && inside(home, p))
    throw RunSetupError(fmt::format("--ro-bind {}: would show the agent your whole HOME ({}); bind the agent's own "
                                    "installation folder instead",
                                    p.string(), home));
}

// The agent's environment: nothing of kbench's own (which may hold keys or point at the source
// tree) except what a compiler or GPU needs to behave the same inside as outside.
std::vector<std::string> agent_environment(const fs::path& home, const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  auto inherit = [&](const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    if (v && *v) env[name] = v;
    else if (fallback) env[name] = fallback;
  };
  inherit("PATH", "/usr/local/bin:/usr/bin:/bin");
  inherit("LANG", "C.UTF-8");
  inherit("USER", "agent");
  inherit("LOGNAME", "agent");
  for (const char* n : {"LC_ALL", "TZ", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "KBENCH_HOST_CXX", "KBENCH_NVCC",
                        "KBENCH_CUDA_ARCH", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"})
    inherit(n, nullptr);
  env["HOME"] = home.string();
  env["TMPDIR"] = "/tmp";
  env["TERM"] = "dumb";  // stdout is a file, not a terminal
  env["SHELL"] = "/bin/sh";
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

void write_config_files(const fs::path& home, const std::vector<ConfigFile>& files) {
  for (const auto& f : files) {
    const fs::path rel = f.path.lexically_normal();
    if (rel.is_absolute() || rel.empty() || *rel.begin() == "..")
      throw RunSetupError("agent config file '" + f.path.string() + "' must be a path inside HOME");
    const fs::path p = home / rel;
    fs::create_directories(p.parent_path());
    write_file_atomically(p, f.content);
    fs::permissions(p, static_cast<fs::perms>(f.mode));
  }
}

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

// The last line the agent's version command prints, run outside the sandbox with the run's
// private HOME and no other environment of kbench's (so it reads no user configuration).
std::string agent_version(const std::vector<std::string>& argv, const fs::path& home) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> cmd = {"env", "-i", "HOME=" + home.string(), std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  const CommandResult r = run_command(cmd, std::chrono::seconds(60));
  // The last line: some CLIs print warnings first (codex about its helper links).
  std::string line;
  std::istringstream lines(r.output);
  for (std::string l; std::getline(lines, l);)
    if (l.find_first_not_of(" \t\r") != std::string::npos) line = l;
  if (r.exit_code == 0 && !line.empty()) return line;
  return fmt::format("unknown ({} failed: {})", join_command(argv),
                     r.timed_out ? std::string("timed out")
                     : r.signal  ? "signal " + std::to_string(r.signal)
                                 : "exit code " + std::to_string(r.exit_code));
}

class EvalLog {
 public:
  explicit EvalLog(const fs::path& p) : out_(p, std::ios::app) {}
  void line(const std::string& s) {
    out_ << s << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
};

}  // namespace

RunOutcome run_agent(const Problem& p, const RunRequest& req) {
  auto say = [&](const std::string& s) {
    if (req.progress) req.progress(s);
  };

  // --- Everything that can be refused is refused before a folder is made. ---
  std::unique_ptr<AgentAdapter> adapter;
  try {
    AdapterOptions ao = req.adapter_options;
    ao.kbench_binary = self_executable();
    adapter = make_adapter(req.agent, ao);
  } catch (const std::invalid_argument& e) {
    throw RunSetupError(e.what());
  }
  if (req.model.empty()) throw RunSetupError("--model is required (the model the agent uses, recorded in run.json)");
  if (req.trial < 1) throw RunSetupError(fmt::format("--trial {}: must be 1 or more", req.trial));
  std::unique_ptr<Target> target;
  try {
    target = make_target(req.target);
  } catch (const std::invalid_argument& e) {
    throw RunSetupError(e.what());
  }
  if (!p.supports(target->name()))
    throw RunSetupError(fmt::format("problem {} does not support the {} target (it supports: {})", p.name, target->name(),
                                    fmt::join(p.targets, ", ")));
  const fs::path runs_dir = fs::absolute(req.runs_dir).lexically_normal();
  for (const auto& ro : adapter->read_only_paths()) check_read_only_path(ro, runs_dir);
  const SandboxProbe probe = probe_sandbox(req.network);
  if (req.sandbox && !probe.ok)
    throw RunSetupError("no sandbox: " + probe.error + ". Pass --no-sandbox to run the agent without one (run.json records it).");
  if (!req.network && !req.sandbox) throw RunSetupError("--no-network needs the sandbox (it unshares the network namespace)");
  // The verdict's sandbox (the build and the worker), checked now rather than after the agent's turn.
  if (req.sandbox)
    if (const BwrapProbe eval_probe = probe_worker_sandbox(); !eval_probe.ok)
      throw RunSetupError("no sandbox for the evaluation: " + eval_probe.error +
                          ". Pass --no-sandbox to run and judge without one (run.json records it).");
  if (!req.gateway_provider_order.empty() && (req.gateway.rfind("forward:", 0) != 0))
    throw RunSetupError("--gateway-provider pins upstream providers: it needs --gateway forward:URL");
  std::optional<gateway::GatewayOptions> gateway_options;
  if (!req.gateway.empty()) {
    try {
      gateway_options = gateway::parse_gateway_spec(req.gateway);
      // Checked now, so that a bad script or price table is refused before anything is made.
      if (gateway_options->mode == gateway::GatewayOptions::Mode::replay) {
        gateway_options->replay_file = fs::absolute(gateway_options->replay_file);
        (void)gateway::ReplayScript::load(gateway_options->replay_file, {{"workspace", "/workspace"}});
      }
      if (!req.gateway_prices.empty()) (void)gateway::PriceTable::load(req.gateway_prices);
      else if (const fs::path d = gateway::default_price_table(); !d.empty()) (void)gateway::PriceTable::load(d);
    } catch (const std::invalid_argument& e) {
      throw RunSetupError(e.what());
    }
    if (!req.network)
      throw RunSetupError("--gateway with --no-network: the sandbox's private network cannot reach the gateway on this "
                          "machine's loopback; leave out --no-network");
    gateway_options->prices_file = req.gateway_prices.empty() ? gateway::default_price_table() : req.gateway_prices;
    gateway_options->max_tokens = req.gateway_max_tokens;
    gateway_options->max_cost_usd = req.gateway_max_cost_usd;
    gateway_options->upstream_key_env = req.gateway_key_env;
    gateway_options->openrouter_order = req.gateway_provider_order;
  }
  const std::string device = target->open_device()->description();

  // --- The run directory and its record. ---
  const auto started = std::chrono::system_clock::now();
  RunDir run = req.run_name.empty() ? RunDir::create(runs_dir, RunKey{req.agent, req.model, p.name, req.trial}, started)
                                     : RunDir::create_named(runs_dir, req.run_name);
  say("run directory " + run.path().string());
  json record = {
      {"schema", kRunSchema},
      {"id", run.path().filename().string()},
      {"status", run_status::running},
      {"agent", req.agent},
      {"model", req.model},
      {"effort", req.effort.empty() ? json(nullptr) : json(req.effort)},
      {"problem", p.name},
      {"target", target->name()},
      {"device", device},
      {"trial", req.trial},
      {"kbench_version", kbench_version()},
      {"budget_seconds", seconds(req.budget)},
      {"grace_seconds", seconds(req.grace)},
      {"check_only", req.check_only},
      {"started_at", iso_utc(started)},
      {"process", process_identity()},
  };
  if (!req.sweep_cell.is_null()) record["sweep"] = req.sweep_cell;
  if (req.sandbox) {
    record["sandbox"] = {{"enabled", true}, {"tool", "bwrap"}, {"version", probe.version}, {"network", req.network}};
  } else {
    record["sandbox"] = {{"enabled", false}, {"reason", "--no-sandbox was given"}, {"available", probe.ok}};
    if (!probe.ok) record["sandbox"]["probe_error"] = probe.error;
  }
  std::string step = "preparing the workspace";
  auto incomplete = [&](const std::string& why) {
    json r = record;
    r["status"] = run_status::incomplete;
    r["incomplete_reason"] = why;
    r["finished_at"] = iso_utc(std::chrono::system_clock::now());
    return r;
  };
  run.write_record(record);
  IncompleteOnSignal guard(run, incomplete("kbench was stopped by a signal while " + step));
  auto save = [&]() {
    run.write_record(record);
    guard.update(incomplete("kbench was stopped by a signal while " + step));
  };
  RunOutcome outcome;
  outcome.dir = run.path();
  try {
    // --- Workspace, private copy, HOME. ---
    const fs::path home = run / "home";
    fs::create_directories(home);
    WorkspaceOptions wo;
    wo.dir = run / "workspace";
    wo.private_dir = run / "kbench";
    wo.target = target->name();
    wo.device = device;
    wo.kbench_binary = self_executable();
    wo.hardware_dir = req.hardware_dir;
    wo.budget = req.budget;
    Workspace ws = prepare_workspace(p, wo);
    for (const auto& n : ws.notes) say("note: " + n);
    write_file_atomically(run / "prompt.md", ws.prompt);

    AgentRunContext ctx{req.model, req.effort, ws.dir, ws.prompt_file, home,
                        std::chrono::duration_cast<std::chrono::seconds>(req.budget), p.name, target->name(), "", ""};
    // --- The model gateway, on a free loopback port, for the agent's turn. ---
    std::unique_ptr<gateway::Gateway> gw;
    if (gateway_options) {
      step = "starting the model gateway";
      gateway_options->log_file = run / "gateway.jsonl";
      gateway_options->replay_vars = {{"workspace", ws.dir.string()}};
      gw = std::make_unique<gateway::Gateway>(*gateway_options);
      gw->start();
      ctx.gateway_url = gw->base_url();
      // The key the agent holds: a placeholder the gateway never forwards (forward mode puts the
      // real key in, from --gateway-key-env).
      ctx.gateway_key = "kbench-gateway-" + run.path().filename().string();
      record["gateway"] = {{"mode", gateway_options->mode == gateway::GatewayOptions::Mode::replay ? "replay" : "forward"},
                           {"source", gateway_options->mode == gateway::GatewayOptions::Mode::replay
                                          ? gateway_options->replay_file.string()
                                          : gateway_options->upstream},
                           {"url", gw->base_url()},
                           {"log", "gateway.jsonl"}};
      say("model gateway " + gw->base_url());
    }
    write_config_files(home, adapter->config_files(ctx));
    const AgentCommand cmd = adapter->command(ctx);
    auto extra_env = adapter->environment(ctx);
    const fs::path gpu_lock_log = home / ".kbench-gpu-lock.jsonl";
    if (!req.gpu_lock.empty()) {
      // A hard link in the private folder (bound read-only into the sandbox) is the same lock.
      fs::create_hard_link(req.gpu_lock, run / "kbench" / "gpu.lock");
      extra_env[kGpuLockEnv] = (run / "kbench" / "gpu.lock").string();
      extra_env[kGpuLockLogEnv] = gpu_lock_log.string();
      record["gpu_lock"] = {{"file", req.gpu_lock.string()}};
    }
    if (gw) {
      // Every CLI's base-URL variable points at the gateway; a key the adapter did not set is a
      // per-run placeholder (forward mode puts the real key in, from --gateway-key-env).
      extra_env["KBENCH_GATEWAY_URL"] = gw->base_url();
      extra_env["ANTHROPIC_BASE_URL"] = gw->base_url();
      extra_env["OPENAI_BASE_URL"] = gw->base_url() + "/v1";
      extra_env["OPENAI_API_BASE"] = gw->base_url() + "/v1";
      extra_env["GOOGLE_GEMINI_BASE_URL"] = gw->base_url();
      extra_env["GEMINI_API_BASE_URL"] = gw->base_url();
      for (const char* k : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}) extra_env.emplace(k, ctx.gateway_key);
    }
    const fs::path transcript = run / "transcript";
    fs::create_directories(transcript);
    BudgetedCommand bc;
    bc.env = agent_environment(home, extra_env);
    bc.cwd = ws.dir;
    bc.stdout_file = transcript / "stdout.log";
    bc.stderr_file = transcript / "stderr.log";
    if (cmd.stdin_text) {
      bc.stdin_file = transcript / "stdin.txt";
      write_file_atomically(bc.stdin_file, *cmd.stdin_text);
    }
    bc.budget = req.budget;
    bc.grace = req.grace;
    bc.tick = req.tick;
    json env_names = json::array();
    for (const auto& [k, _] : extra_env) env_names.push_back(k);
    record["agent_command"] = cmd.display.empty() ? join_command(cmd.argv) : cmd.display;
    if (const auto vc = adapter->version_command(); !vc.empty()) record["agent_version"] = agent_version(vc, home);
    record["agent_env"] = env_names;  // names only: values may be keys
    record["workspace"] = ws.dir.string();
    record["home"] = home.string();
    if (req.sandbox) {
      SandboxSpec spec;
      spec.workspace = ws.dir;
      spec.home = home;
      spec.read_only = ws.read_only;
      for (const auto& ro : adapter->read_only_paths()) spec.read_only.push_back(ro);
      spec.read_only_in_workspace = {ws.wrapper};
      spec.network = req.network;
      bc.argv = sandbox_command(spec, cmd.argv);
      bc.sandboxed = true;
      json ro = json::array(), gpus = json::array();
      for (const auto& r : spec.read_only) ro.push_back(r.string());
      for (const auto& g : gpu_device_nodes()) gpus.push_back(g.string());
      record["sandbox"]["read_only"] = ro;
      record["sandbox"]["gpu_devices"] = gpus;
    } else {
      bc.argv = cmd.argv;
    }

    // --- The agent's turn. ---
    step = "the agent was running";
    record["agent_started_at"] = iso_utc(std::chrono::system_clock::now());
    save();
    say(fmt::format("agent {} ({}) started: budget {}", req.agent, req.model, describe_duration(req.budget)));
    const BudgetOutcome b = run_with_budget(bc);
    if (gw) {
      gw->stop();
      gw.reset();
      try {
        const json usage = gateway::usage_summary(run / "gateway.jsonl");
        run.write_json("usage.json", usage);
        record["gateway"]["usage"] = {{"exchanges", usage["exchanges"]}, {"errors", usage["errors"]},
                                      {"total_tokens", usage["total_tokens"]}, {"cost_usd", usage["cost_usd"]},
                                      {"cost_complete", usage["cost_complete"]}};
      } catch (const std::exception& e) {
        record["gateway"]["usage_error"] = e.what();
      }
    }
    record["agent_finished_at"] = iso_utc(std::chrono::system_clock::now());
    record["agent_process"] = {{"exit_code", b.exit_code},      {"signal", b.signal},
                               {"seconds", b.seconds},          {"killed_at_budget", b.killed_at_budget},
                               {"sigterm_sent", b.terminated},  {"sigkill_sent", b.killed},
                               {"strays_after_exit", b.strays}, {"survivors", b.survivors}};
    // 126/127: the shell could not execute the agent's command (not executable, not found). The
    // model never saw the problem, so what follows is no result of the model's: the store counts
    // the run as an infrastructure failure (store/run_index.cpp), retried by sweeps.
    if (!b.killed_at_budget && !b.signal && (b.exit_code == 126 || b.exit_code == 127)) {
      record["agent_process"]["start_failure"] =
          fmt::format("the agent's command could not be run (exit code {}: {})", b.exit_code,
                      b.exit_code == 127 ? "command not found" : "not executable");
      say(record["agent_process"]["start_failure"].get<std::string>());
    }
    say(b.killed_at_budget ? fmt::format("agent stopped at its budget after {:.1f} s", b.seconds)
        : b.interrupted    ? fmt::format("agent stopped: kbench got signal {}", b.interrupt_signal)
                           : fmt::format("agent finished after {:.1f} s ({})", b.seconds,
                                      b.signal ? "signal " + std::to_string(b.signal) : "exit code " + std::to_string(b.exit_code)));

    // --- What it left: transcript events, solution, workspace archive. ---
    step = "collecting the agent's work";
    save();
    try {
      const auto events = adapter->normalize(TranscriptFiles{bc.stdout_file, bc.stderr_file, home});
      write_events_jsonl(transcript / "events.jsonl", events);
      record["transcript"] = {{"events", events.size()}};
      // What the agent's own output says it used; usage.json has the gateway's count.
      if (const auto u = transcript_usage(events)) record["transcript"]["usage"] = usage_to_json(*u);
    } catch (const std::exception& e) {
      record["transcript_error"] = e.what();
    }
    const SolutionLimits limits;
    const auto notes = copy_solution(ws.dir, target->name(), run / "solution", limits);
    record["solution_limits"] = {{"max_file_bytes", limits.max_file_bytes},
                                 {"max_total_bytes", limits.max_total_bytes},
                                 {"max_hole_bytes", limits.max_hole_bytes},
                                 {"regular_files_only", true}};
    json files = json::array();
    for (const auto& f : solution_files(run / "solution", target->name())) files.push_back(f.filename().string());
    record["solution_files"] = files;
    if (!notes.empty()) record["solution_notes"] = notes;
    const CommandResult tar = run_command({"tar", "--sparse", "-czf", (run / "workspace.tar.gz.tmp").string(), "-C", run.path().string(), "workspace"},
                                          std::chrono::minutes(10));
    if (tar.exit_code == 0 && !tar.timed_out) {
      fs::rename(run / "workspace.tar.gz.tmp", run / "workspace.tar.gz");
      // The archive is the record of the workspace; the folder itself can be large (builds).
      if (std::string err = remove_tree(ws.dir); !err.empty()) record["workspace_cleanup_error"] = err;
    } else {
      fs::remove(run / "workspace.tar.gz.tmp");
      record["archive_error"] = "tar failed (" + (tar.timed_out ? std::string("timed out") : "exit code " + std::to_string(tar.exit_code)) +
                                "): " + tar.output + "; the workspace folder is kept";
    }

    if (b.interrupted) {
      outcome.interrupt_signal = b.interrupt_signal;
      record = incomplete(fmt::format("kbench got signal {} while the agent was running; the agent was stopped and its "
                                      "work kept, but not judged",
                                      b.interrupt_signal));
      run.write_record(record);
      outcome.status = run_status::incomplete;
      return outcome;
    }

    // --- The verdict, outside the sandbox, from the fresh copy in solution/. ---
    step = "judging the solution";
    save();
    say("judging " + (run / "solution").string());
    EvalLog log(run / "eval.log");
    EvalOptions o;
    o.target = target->name();
    o.check = true;
    o.bench = !req.check_only;
    o.work_dir = run / "eval";
    o.build_dir = kbench_cache_dir() / "build";
    o.hardware_dir = req.hardware_dir;
    o.isolate = req.sandbox;
    o.no_isolation_reason = "--no-sandbox was given";
    o.progress = [&](const std::string& s) {
      log.line(s);
      say(s);
    };
    std::unique_ptr<GpuLock> gpu_lock;
    if (!req.gpu_lock.empty()) {
      say("waiting for the GPU lock " + req.gpu_lock.string());
      gpu_lock = std::make_unique<GpuLock>(req.gpu_lock, gpu_lock_log, "official evaluation");
    }
    EvalResult r = evaluate(p, run / "solution", o);
    if (gpu_lock) {
      gpu_lock.reset();  // released, and its use logged
      json summary = summarize_gpu_lock_log(gpu_lock_log);
      summary["file"] = req.gpu_lock.string();
      record["gpu_lock"] = summary;
    }
    if (req.format_result) log.line(req.format_result(r));
    run.write_json("result.json", to_json(r, true));
    json verdict = {{"verdict", verdict_name(r.verdict())}, {"failure", reason_name(r.finding.reason)},
                    {"message", r.finding.message}};
    if (r.peak_fraction_geomean) verdict["peak_fraction"] = *r.peak_fraction_geomean;
    if (r.annotation) verdict["annotation"] = r.annotation->verdict;  // docs/annotations.md
    record["verdict"] = verdict;
    record["status"] = b.killed_at_budget ? run_status::killed_at_budget : run_status::complete;
    record["finished_at"] = iso_utc(std::chrono::system_clock::now());
    run.write_record(record);
    outcome.status = record["status"].get<std::string>();
    outcome.result = std::move(r);
    return outcome;
  } catch (const std::exception& e) {
    record = incomplete(std::string("kbench failed while ") + step + ": " + e.what());
    run.write_record(record);
    throw;
  }
}

}  // namespace kb
