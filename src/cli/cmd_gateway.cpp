// `kbench gateway`: the model gateway as a stand-alone server (docs/gateway.md). It serves until
// SIGINT or SIGTERM, then writes the usage totals of its log.
#include <fmt/format.h>
#include <signal.h>

#include <iostream>

#include "agent/gateway/gateway.h"
#include "agent/gateway/prices.h"
#include "cli/app.h"
#include "cli/option_checks.h"
#include "core/json_text.h"
#include "core/atomic_file.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct GatewayCommand {
  std::string forward;
  fs::path replay;
  fs::path usage_file;
  std::string provider_order;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost;
  gateway::GatewayOptions o;
};

int run_gateway(GatewayCommand& c, GlobalOptions& g) {
  if (c.forward.empty() == c.replay.empty()) throw UsageError("kbench gateway: give exactly one of --forward URL or --replay FILE");
  gateway::GatewayOptions& o = c.o;
  o.mode = c.forward.empty() ? gateway::GatewayOptions::Mode::replay : gateway::GatewayOptions::Mode::forward;
  o.upstream = c.forward;
  o.replay_file = c.replay;
  o.max_tokens = c.max_tokens;
  if (o.prices_file.empty()) o.prices_file = gateway::default_price_table();
  o.max_cost_usd = c.max_cost;
  for (size_t i = 0; !c.provider_order.empty() && i != std::string::npos;) {
    const size_t comma = c.provider_order.find(',', i);
    std::string p = c.provider_order.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
    if (p.empty()) throw UsageError("--openrouter-providers '" + c.provider_order + "': an empty provider name");
    o.openrouter_order.push_back(p);
    i = comma == std::string::npos ? comma : comma + 1;
  }
  if (!o.openrouter_order.empty() && o.mode != gateway::GatewayOptions::Mode::forward)
    throw UsageError("--openrouter-providers only applies to --forward");
  // Signals are taken by sigwait below; block them before the server's threads exist.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::unique_ptr<gateway::Gateway> gw;
  try {
    gw = std::make_unique<gateway::Gateway>(o);
    gw->start();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  if (g.json)
    std::cout << kb::json_text(json{{"url", gw->base_url()}, {"port", gw->port()}, {"log", o.log_file.string()}}, -1) << std::endl;
  else
    std::cout << fmt::format("kbench gateway ({}) listening on {}\n  log {}\n",
                             o.mode == gateway::GatewayOptions::Mode::replay ? "replay " + o.replay_file.string()
                                                                              : "forward to " + o.upstream,
                             gw->base_url(), o.log_file.string())
              << std::flush;
  int sig = 0;
  sigwait(&set, &sig);
  gw->stop();
  const json summary = gateway::usage_summary(o.log_file);
  if (!c.usage_file.empty()) write_file_atomically(c.usage_file, kb::json_text(summary) + "\n");
  std::cerr << fmt::format("kbench gateway: stopped (signal {}); {} exchanges, {} tokens, ${:.6f}{}\n", sig,
                           summary["exchanges"].get<int64_t>(), summary["total_tokens"].get<int64_t>(),
                           summary["cost_usd"].get<double>(), summary["cost_complete"].get<bool>() ? "" : " (some exchanges unpriced)");
  return 0;
}

}  // namespace

void register_gateway_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<GatewayCommand>();
  auto* cmd = app.add_subcommand("gateway", "Serve the model gateway: forward to a provider or replay a script, logging usage and cost");
  add_global_options(*cmd, g);
  cmd->add_option("--forward", c->forward, "Forward mode: the upstream base URL (the request path is appended, e.g. https://openrouter.ai/api)");
  cmd->add_option("--replay", c->replay, "Replay mode: the script of turns to serve (docs/gateway.md)");
  cmd->add_option("--log", c->o.log_file, "The exchange log (JSON Lines, appended)")->required();
  cmd->add_option("--usage", c->usage_file, "Write the usage totals (usage.json) here when stopped");
  cmd->add_option("--prices", c->o.prices_file,
                  "Price table (TOML, $/Mtok per model with sources; default: $KBENCH_PRICES or prices/models.toml)");
  cmd->add_option("--max-tokens", c->max_tokens, "Budget: refuse requests (HTTP 429) once this many tokens are used")
      ->check(whole_in(1, 1000000000000, "tokens"));
  cmd->add_option("--max-cost", c->max_cost, "Budget: refuse requests (HTTP 429) once this many dollars are spent")
      ->check(number_in(0.000001, 1000000, "USD"));
  cmd->add_option("--openrouter-providers", c->provider_order,
                  "Forward mode: pin OpenRouter providers, comma-separated (provider.order, allow_fallbacks false)");
  cmd->add_option("--upstream-key-env", c->o.upstream_key_env,
                  "Forward mode: environment variable with the upstream API key (replaces the client's key)");
  cmd->add_option("--host", c->o.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", c->o.port, "Port (0: a free one, printed)")->check(whole_in(0, 65535, "(a TCP port)"))->capture_default_str();
  cmd->callback([c, &g, &exit_code] { exit_code = run_gateway(*c, g); });
}

}  // namespace kb::cli
