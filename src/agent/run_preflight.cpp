// The first stage of an agent run (agent/run_stages.h): everything that can be refused is refused
// here, before a run directory is made, so that a bad option leaves nothing behind.
#include <fmt/format.h>

#include <cstdlib>

#include "agent/cli_install.h"
#include "agent/gateway/prices.h"
#include "agent/gateway/replay.h"
#include "agent/run_stages.h"
#include "core/data_dir.h"
#include "core/path_within.h"
#include "core/self_executable.h"
#include "core/version.h"
#include "eval/worker_sandbox.h"
#include "target/ceilings.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// A read-only path an adapter asks for must not open what the sandbox exists to hide.
void check_read_only_path(const fs::path& p, const fs::path& runs_dir) {
  if (!p.is_absolute()) throw RunSetupError("--ro-bind " + p.string() + ": give an absolute path");
  if (!fs::exists(p)) throw RunSetupError("--ro-bind " + p.string() + ": no such file or folder");
  const std::pair<fs::path, const char*> hidden[] = {
      {source_dir(), "the kbench source tree"}, {data_dir(), "kbench's data folder (the deck and its solutions)"},
      {runs_dir, "the runs directory"}};
  for (const auto& [h, what] : hidden)
    if (path_within(p, h) || path_within(h, p))
      throw RunSetupError(fmt::format("--ro-bind {}: would show the agent {} ({})", p.string(), what, h.string()));
  // kbench's cache holds every run's build log and library; only the agents' installations in it
  // (tools/agents, cli_install.h) may be shown.
  const fs::path cache = kbench_cache_dir();
  if ((path_within(p, cache) && !path_within(p, agents_dir())) || path_within(cache, p))
    throw RunSetupError(fmt::format("--ro-bind {}: would show the agent kbench's cache ({}), which holds other runs' "
                                    "builds and logs",
                                    p.string(), cache.string()));
  if (const char* home = std::getenv("HOME"); home && *home && path_within(home, p))
    throw RunSetupError(fmt::format("--ro-bind {}: would show the agent your whole HOME ({}); bind the agent's own "
                                    "installation folder instead",
                                    p.string(), home));
}

// The sandboxes the run needs: the agent's, and the verdict's (the build and the worker), both
// checked now rather than after the agent's turn.
SandboxProbe check_sandboxes(const RunRequest& req) {
  SandboxProbe probe = probe_sandbox(req.network);
  if (req.sandbox && !probe.ok)
    throw RunSetupError("no sandbox: " + probe.error + ". Pass --no-sandbox to run the agent without one (run.json records it).");
  if (!req.network && !req.sandbox) throw RunSetupError("--no-network needs the sandbox (it unshares the network namespace)");
  if (req.sandbox)
    if (const BwrapProbe eval_probe = probe_worker_sandbox(); !eval_probe.ok)
      throw RunSetupError("no sandbox for the evaluation: " + eval_probe.error +
                          ". Pass --no-sandbox to run and judge without one (run.json records it).");
  return probe;
}

// --gateway and its options, with the replay script and the price table loaded once to check them.
std::optional<gateway::GatewayOptions> gateway_options(const RunRequest& req) {
  if (!req.gateway_provider_order.empty() && (req.gateway.rfind("forward:", 0) != 0))
    throw RunSetupError("--gateway-provider pins upstream providers: it needs --gateway forward:URL");
  if (req.gateway.empty()) return std::nullopt;
  gateway::GatewayOptions o;
  try {
    o = gateway::parse_gateway_spec(req.gateway);
    if (o.mode == gateway::GatewayOptions::Mode::replay) {
      o.replay_file = fs::absolute(o.replay_file);
      (void)gateway::ReplayScript::load(o.replay_file, {{"workspace", "/workspace"}});
    }
    if (!req.gateway_prices.empty()) (void)gateway::PriceTable::load(req.gateway_prices);
    else if (const fs::path d = gateway::default_price_table(); !d.empty()) (void)gateway::PriceTable::load(d);
  } catch (const std::invalid_argument& e) {
    throw RunSetupError(e.what());
  }
  if (!req.network)
    throw RunSetupError("--gateway with --no-network: the sandbox's private network cannot reach the gateway on this "
                        "machine's loopback; leave out --no-network");
  o.prices_file = req.gateway_prices.empty() ? gateway::default_price_table() : req.gateway_prices;
  o.max_tokens = req.gateway_max_tokens;
  o.max_cost_usd = req.gateway_max_cost_usd;
  o.upstream_key_env = req.gateway_key_env;
  o.openrouter_order = req.gateway_provider_order;
  return o;
}

}  // namespace

RunPlan refuse_before_anything(const Problem& p, const RunRequest& req) {
  RunPlan plan;
  try {
    AdapterOptions ao = req.adapter_options;
    ao.kbench_binary = self_executable();
    ao.max_turns = req.limits.max_turns;
    plan.adapter = make_adapter(req.agent, ao);
  } catch (const std::invalid_argument& e) {
    throw RunSetupError(e.what());
  }
  if (req.model.empty()) throw RunSetupError("--model is required (the model the agent uses, recorded in run.json)");
  if (req.trial < 1) throw RunSetupError(fmt::format("--trial {}: must be 1 or more", req.trial));
  try {
    plan.target = make_target(req.target);
  } catch (const std::invalid_argument& e) {
    throw RunSetupError(e.what());
  }
  if (!p.supports(plan.target->name()))
    throw RunSetupError(fmt::format("problem {} does not support the {} target (it supports: {})", p.name,
                                    plan.target->name(), fmt::join(p.targets, ", ")));
  plan.runs_dir = fs::absolute(req.runs_dir).lexically_normal();
  for (const auto& ro : plan.adapter->read_only_paths()) check_read_only_path(ro, plan.runs_dir);
  plan.sandbox_probe = check_sandboxes(req);
  plan.gateway_options = gateway_options(req);
  plan.device = plan.target->device_description();
  return plan;
}

}  // namespace kb
