// The stages of an agent run up to and including the agent's turn (agent/run_stages.h): its
// workspace and private HOME, the model gateway, and the agent run in its sandbox under its budget.
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "agent/run_stages.h"
#include "core/atomic_file.h"
#include "core/gpu_lock.h"
#include "core/self_executable.h"
#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

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

// The variables the adapter sets (its own CLI's, pointing at the gateway when there is one), the
// gateway's URL under kbench's own name for any agent, and the GPU lock of a shared GPU.
std::map<std::string, std::string> adapter_environment(const RunRequest& req, const RunPlan& plan, OpenRun& run,
                                                       const AgentRunContext& ctx, const fs::path& gpu_lock_log) {
  auto env = plan.adapter->environment(ctx);
  if (!ctx.gateway_url.empty()) env["KBENCH_GATEWAY_URL"] = ctx.gateway_url;
  if (!req.gpu_lock.empty()) {
    // A hard link in the private folder (bound read-only into the sandbox) is the same lock.
    fs::create_hard_link(req.gpu_lock, run / "kbench" / "gpu.lock");
    env[kGpuLockEnv] = (run / "kbench" / "gpu.lock").string();
    env[kGpuLockLogEnv] = gpu_lock_log.string();
    run.record.gpu_lock = GpuLockRecord{req.gpu_lock.string(), std::nullopt, std::nullopt, std::nullopt};
  }
  return env;
}

// argv of the agent: its command, in the sandbox unless --no-sandbox was given.
std::vector<std::string> sandboxed_argv(const RunRequest& req, const RunPlan& plan, OpenRun& run, const Workspace& ws,
                                        const fs::path& home, const AgentCommand& cmd) {
  if (!req.sandbox) return cmd.argv;
  SandboxSpec spec;
  spec.workspace = ws.dir;
  spec.home = home;
  spec.read_only = ws.read_only;
  for (const auto& ro : plan.adapter->read_only_paths()) spec.read_only.push_back(ro);
  spec.read_only_in_workspace = {ws.wrapper};
  spec.network = req.network;
  std::vector<std::string> read_only, gpus;
  for (const auto& r : spec.read_only) read_only.push_back(r.string());
  for (const auto& g : gpu_device_nodes()) gpus.push_back(g.string());
  run.record.sandbox.read_only = std::move(read_only);
  run.record.sandbox.gpu_devices = std::move(gpus);
  return sandbox_command(spec, cmd.argv);
}

// Stops the gateway (the agent is done with it) and puts usage.json's totals into the record.
void stop_gateway(std::unique_ptr<gateway::Gateway> gw, OpenRun& run) {
  if (!gw) return;
  gw->stop();
  gw.reset();
  try {
    const json usage = gateway::usage_summary(run / "gateway.jsonl");
    run.dir().write_json("usage.json", usage);
    run.record.gateway->usage =
        GatewayUsageRecord{usage["exchanges"].get<int64_t>(), usage["errors"].get<int64_t>(),
                           usage["total_tokens"].get<int64_t>(), usage["cost_usd"].get<double>(),
                           usage["cost_complete"].get<bool>()};
  } catch (const std::exception& e) {
    run.record.gateway->usage_error = e.what();
  }
}

AgentProcessRecord process_record(const BudgetOutcome& b) {
  AgentProcessRecord p{b.exit_code, b.signal, b.seconds, b.killed_at_budget, b.terminated, b.killed, b.strays,
                       b.survivors, std::nullopt};
  // 126/127: the shell could not execute the agent's command (not executable, not found). The
  // model never saw the problem, so what follows is no result of the model's: the store counts
  // the run as an infrastructure failure (store/run_index.cpp), retried by sweeps.
  if (!b.killed_at_budget && !b.signal && (b.exit_code == 126 || b.exit_code == 127))
    p.start_failure = fmt::format("the agent's command could not be run (exit code {}: {})", b.exit_code,
                                  b.exit_code == 127 ? "command not found" : "not executable");
  return p;
}

std::string how_it_ended(const BudgetOutcome& b) {
  if (b.killed_at_budget) return fmt::format("agent stopped at its budget after {:.1f} s", b.seconds);
  if (b.interrupted) return fmt::format("agent stopped: kbench got signal {}", b.interrupt_signal);
  return fmt::format("agent finished after {:.1f} s ({})", b.seconds,
                     b.signal ? "signal " + std::to_string(b.signal) : "exit code " + std::to_string(b.exit_code));
}

}  // namespace

PreparedRun prepare_workspace_home(const Problem& p, const RunRequest& req, const RunPlan& plan, OpenRun& run) {
  const fs::path home = run / "home";
  fs::create_directories(home);
  WorkspaceOptions wo;
  wo.dir = run / "workspace";
  wo.private_dir = run / "kbench";
  wo.target = plan.target->name();
  wo.device = plan.device;
  wo.kbench_binary = self_executable();
  wo.hardware_dir = req.hardware_dir;
  wo.budget = req.limits.budget;
  Workspace ws = prepare_workspace(p, wo);
  for (const auto& n : ws.notes) say(req, "note: " + n);
  write_file_atomically(run / "prompt.md", ws.prompt);
  AgentRunContext ctx{req.model, req.effort, ws.dir, ws.prompt_file, home,
                      std::chrono::duration_cast<std::chrono::seconds>(req.limits.budget), p.name, plan.target->name(), "", ""};
  return PreparedRun{std::move(ws), home, std::move(ctx)};
}

std::unique_ptr<gateway::Gateway> start_gateway(const RunRequest& req, RunPlan& plan, OpenRun& run, PreparedRun& prepared) {
  if (!plan.gateway_options) return nullptr;
  run.step = "starting the model gateway";
  gateway::GatewayOptions& o = *plan.gateway_options;
  o.log_file = run / "gateway.jsonl";
  o.replay_vars = {{"workspace", prepared.workspace.dir.string()}};
  auto gw = std::make_unique<gateway::Gateway>(o);
  gw->start();
  prepared.context.gateway_url = gw->base_url();
  // The key the agent holds: a placeholder the gateway never forwards (forward mode puts the real
  // key in, from --gateway-key-env).
  prepared.context.gateway_key = "kbench-gateway-" + run.dir().path().filename().string();
  const bool replay = o.mode == gateway::GatewayOptions::Mode::replay;
  GatewayRecord g;
  g.mode = replay ? "replay" : "forward";
  g.source = replay ? o.replay_file.string() : o.upstream;
  g.url = gw->base_url();
  run.record.gateway = std::move(g);
  say(req, "model gateway " + gw->base_url());
  return gw;
}

AgentTurn agent_turn(const RunRequest& req, const RunPlan& plan, OpenRun& run, const PreparedRun& prepared,
                     std::unique_ptr<gateway::Gateway> gw) {
  const AgentRunContext& ctx = prepared.context;
  const Workspace& ws = prepared.workspace;
  AgentTurn turn;
  write_config_files(prepared.home, plan.adapter->config_files(ctx));
  const AgentCommand cmd = plan.adapter->command(ctx);
  turn.gpu_lock_log = prepared.home / ".kbench-gpu-lock.jsonl";
  const auto env = adapter_environment(req, plan, run, ctx, turn.gpu_lock_log);

  const fs::path transcript = run / "transcript";
  fs::create_directories(transcript);
  turn.transcript = TranscriptFiles{transcript / "stdout.log", transcript / "stderr.log", prepared.home};
  BudgetedCommand bc;
  bc.env = agent_environment(prepared.home, env);
  bc.cwd = ws.dir;
  bc.stdout_file = turn.transcript.stdout_file;
  bc.stderr_file = turn.transcript.stderr_file;
  if (cmd.stdin_text) {
    bc.stdin_file = transcript / "stdin.txt";
    write_file_atomically(bc.stdin_file, *cmd.stdin_text);
  }
  bc.budget = req.limits.budget;
  bc.grace = req.grace;
  bc.tick = req.tick;
  std::vector<std::string> env_names;
  for (const auto& [k, _] : env) env_names.push_back(k);
  run.record.agent_command = cmd.display.empty() ? join_command(cmd.argv) : cmd.display;
  if (const auto vc = plan.adapter->version_command(); !vc.empty()) run.record.agent_version = agent_version(vc, prepared.home);
  run.record.agent_env = std::move(env_names);
  run.record.workspace = ws.dir.string();
  run.record.home = prepared.home.string();
  bc.argv = sandboxed_argv(req, plan, run, ws, prepared.home, cmd);
  bc.sandboxed = req.sandbox;

  run.step = "the agent was running";
  run.record.agent_started_at = iso_utc(std::chrono::system_clock::now());
  run.save();
  say(req, fmt::format("agent {} ({}) started: budget {}", req.agent, req.model, describe_duration(req.limits.budget)));
  turn.outcome = run_with_budget(bc);
  stop_gateway(std::move(gw), run);
  run.record.agent_finished_at = iso_utc(std::chrono::system_clock::now());
  run.record.agent_process = process_record(turn.outcome);
  if (run.record.agent_process->start_failure) say(req, *run.record.agent_process->start_failure);
  say(req, how_it_ended(turn.outcome));
  return turn;
}

}  // namespace kb
