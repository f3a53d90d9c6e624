// The printers of store/results.h: JSON, CSV, Markdown and terminal text, all from one Results.
#include <fmt/format.h>

#include <sstream>

#include "store/results.h"

namespace kb {
using json = nlohmann::json;

namespace {

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string fraction(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "-"; }

// A cost as a reader should take it: "unknown" when no run of the set has a known cost, a floor
// ("$1.20+") when some are unknown or partial.
std::string cost_text(double usd, bool complete, bool any_known) {
  if (!any_known) return "unknown";
  return fmt::format("${:.2f}{}", usd, complete ? "" : "+");
}

bool any_cost_known(const Results& r, const std::string& entrant) {
  for (const auto& run : r.runs)
    if (run.entrant == entrant && run.cost_usd) return true;
  return false;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// "2/3 · 0.412 (0.380)": passes over trials, best peak fraction, median in brackets.
std::string cell_text(const CellResult& c) {
  if (c.trials == 0) return c.not_counted ? fmt::format("- ({} not counted)", c.not_counted) : "-";
  return fmt::format("{}/{} {} ({:.3f})", c.passes, c.trials, fraction(c.best), c.median);
}

json opt_json(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
json opt_json(const std::optional<bool>& v) { return v ? json(*v) : json(nullptr); }

// v3's view of an entrant: "2/5 (1 of 3 problems)": trials that beat the baseline over the trials
// on compared problems, and the problems where one did; "-" when no problem is compared.
std::string beats_text(const Results& r, const EntrantResult& e) {
  if (r.compared_problems.empty()) return "-";
  return fmt::format("{}/{} ({} of {} problems)", e.beats, e.compared_trials, e.problems_beaten, r.compared_problems.size());
}

std::string tokens_text(int64_t n) {
  if (n >= 10'000'000) return fmt::format("{:.0f}M", static_cast<double>(n) / 1e6);
  if (n >= 10'000) return fmt::format("{:.0f}k", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

}  // namespace

json results_to_json(const Results& r) {
  json j = {{"schema", "kbench.results/1"}, {"sweep", r.sweep ? json(*r.sweep) : json(nullptr)},
            {"entrants", r.entrants}, {"problems", r.problems}, {"compared_problems", r.compared_problems}};
  json cells = json::array();
  for (const auto& c : r.cells) {
    json ids = json::array();
    for (size_t k : c.runs) ids.push_back(r.runs[k].id);
    cells.push_back({{"entrant", c.entrant}, {"problem", c.problem}, {"trials", c.trials}, {"passes", c.passes},
                     {"best_peak_fraction", opt_json(c.best)}, {"median_peak_fraction", c.median}, {"spread", c.spread},
                     {"not_counted", c.not_counted}, {"beats_baseline", opt_json(c.beats)}, {"runs", ids}});
  }
  j["cells"] = cells;
  json ents = json::array();
  for (const auto& e : r.per_entrant)
    ents.push_back({{"entrant", e.entrant}, {"agent", e.agent}, {"model", e.model}, {"effort", e.effort}, {"runs", e.runs},
                    {"trials", e.trials}, {"passes", e.passes}, {"problems_passed", e.problems_passed},
                    {"compared_trials", e.compared_trials}, {"beats_baseline", e.beats}, {"problems_beaten", e.problems_beaten},
                    {"mean_median_peak_fraction", e.mean_median}, {"input_tokens", e.input_tokens},
                    {"output_tokens", e.output_tokens}, {"cache_read_tokens", e.cache_read_tokens},
                    {"cache_write_tokens", e.cache_write_tokens}, {"reasoning_tokens", e.reasoning_tokens},
                    {"total_tokens", e.total_tokens},
                    {"cost_usd", any_cost_known(r, e.entrant) ? json(e.cost_usd) : json(nullptr)},
                    {"cost_complete", e.cost_complete}, {"agent_seconds", e.agent_seconds}});
  j["per_entrant"] = ents;
  json runs = json::array();
  for (const auto& x : r.runs)
    runs.push_back({{"id", x.id},
                    {"dir", x.dir},
                    {"sweep", x.sweep.empty() ? json(nullptr) : json(x.sweep)},
                    {"entrant", x.entrant},
                    {"agent", x.agent},
                    {"model", x.model},
                    {"effort", x.effort},
                    {"problem", x.problem},
                    {"target", x.target},
                    {"device", x.device},
                    {"trial", x.trial},
                    {"status", x.status},
                    {"infra_failure", x.infra_failure.empty() ? json(nullptr) : json(x.infra_failure)},
                    {"counted", x.counted},
                    {"verdict", x.verdict},
                    {"failure", x.failure},
                    {"peak_fraction", opt_json(x.peak_fraction)},
                    {"sol_fraction", opt_json(x.sol_fraction)},
                    {"score", x.score},
                    {"beats_baseline", opt_json(x.beats_baseline)},
                    {"speedup_vs_baseline", opt_json(x.speedup_vs_baseline)},
                    {"agent_seconds", opt_json(x.agent_seconds)},
                    {"input_tokens", x.input_tokens},
                    {"output_tokens", x.output_tokens},
                    {"cache_read_tokens", x.cache_read_tokens},
                    {"cache_write_tokens", x.cache_write_tokens},
                    {"reasoning_tokens", x.reasoning_tokens},
                    {"total_tokens", x.total_tokens},
                    {"cost_usd", opt_json(x.cost_usd)},
                    {"cost_complete", x.cost_complete},
                    {"annotation", x.annotation},
                    {"started_at", x.started_at},
                    {"finished_at", x.finished_at}});
  j["runs"] = runs;
  return j;
}

std::string results_cells_csv(const Results& r) {
  std::ostringstream o;
  o << "entrant,problem,trials,passes,best_peak_fraction,median_peak_fraction,spread,not_counted,beats_baseline\n";
  for (const auto& c : r.cells)
    o << csv_field(c.entrant) << ',' << csv_field(c.problem) << ',' << c.trials << ',' << c.passes << ',' << csv_num(c.best)
      << ',' << csv_num(c.median) << ',' << csv_num(c.spread) << ',' << c.not_counted << ','
      << (c.beats ? std::to_string(*c.beats) : std::string()) << '\n';
  return o.str();
}

std::string results_runs_csv(const Results& r) {
  std::ostringstream o;
  o << "id,sweep,entrant,agent,model,effort,problem,trial,status,infra_failure,counted,verdict,failure,peak_fraction,"
       "sol_fraction,agent_seconds,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,"
       "total_tokens,cost_usd,cost_complete,started_at,beats_baseline,speedup_vs_baseline\n";
  for (const auto& x : r.runs)
    o << csv_field(x.id) << ',' << csv_field(x.sweep) << ',' << csv_field(x.entrant) << ',' << csv_field(x.agent) << ','
      << csv_field(x.model) << ',' << csv_field(x.effort) << ',' << csv_field(x.problem) << ',' << x.trial << ','
      << x.status << ',' << x.infra_failure << ',' << (x.counted ? 1 : 0) << ',' << x.verdict << ',' << x.failure << ','
      << csv_num(x.peak_fraction) << ',' << csv_num(x.sol_fraction) << ',' << csv_num(x.agent_seconds) << ','
      << x.input_tokens << ',' << x.output_tokens << ',' << x.cache_read_tokens << ',' << x.cache_write_tokens << ','
      << x.reasoning_tokens << ',' << x.total_tokens << ',' << csv_num(x.cost_usd) << ',' << (x.cost_complete ? 1 : 0)
      << ',' << x.started_at << ',' << (x.beats_baseline ? (*x.beats_baseline ? "1" : "0") : "") << ','
      << csv_num(x.speedup_vs_baseline) << '\n';
  return o.str();
}

std::string results_markdown(const Results& r) {
  std::ostringstream o;
  o << "Each cell: passes/trials, best peak fraction, (median over trials, a failed trial scoring 0).\n\n";
  o << "| entrant |";
  for (const auto& p : r.problems) o << ' ' << md_cell(p) << " |";
  o << "\n|---|";
  for (size_t j = 0; j < r.problems.size(); ++j) o << "---|";
  o << '\n';
  for (size_t i = 0; i < r.entrants.size(); ++i) {
    o << "| " << md_cell(r.entrants[i]) << " |";
    for (size_t j = 0; j < r.problems.size(); ++j) o << ' ' << md_cell(cell_text(r.cell(i, j))) << " |";
    o << '\n';
  }
  o << "\n| entrant | passes | problems passed | mean median | beats baseline | runs | tokens | cost |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : r.per_entrant)
    o << "| " << md_cell(e.entrant) << " | " << e.passes << '/' << e.trials << " | " << e.problems_passed << '/'
      << r.problems.size() << " | " << fmt::format("{:.3f}", e.mean_median) << " | " << beats_text(r, e) << " | " << e.runs << " | "
      << tokens_text(e.total_tokens) << " | " << cost_text(e.cost_usd, e.cost_complete, any_cost_known(r, e.entrant))
      << " |\n";
  return o.str();
}

std::string results_text(const Results& r) {
  if (r.runs.empty()) return "no runs in the database" + (r.sweep ? " for sweep " + *r.sweep : std::string()) + "\n";
  std::ostringstream o;
  size_t w0 = std::string("entrant").size();
  for (const auto& e : r.entrants) w0 = std::max(w0, e.size());
  std::vector<size_t> w(r.problems.size());
  for (size_t j = 0; j < r.problems.size(); ++j) {
    w[j] = r.problems[j].size();
    for (size_t i = 0; i < r.entrants.size(); ++i) w[j] = std::max(w[j], cell_text(r.cell(i, j)).size());
  }
  o << fmt::format("{:<{}}", "entrant", w0);
  for (size_t j = 0; j < r.problems.size(); ++j) o << fmt::format("  {:<{}}", r.problems[j], w[j]);
  o << '\n';
  for (size_t i = 0; i < r.entrants.size(); ++i) {
    o << fmt::format("{:<{}}", r.entrants[i], w0);
    for (size_t j = 0; j < r.problems.size(); ++j) o << fmt::format("  {:<{}}", cell_text(r.cell(i, j)), w[j]);
    o << '\n';
  }
  o << "(each cell: passes/trials, best peak fraction, (median over trials; a failed trial scores 0))\n\n";
  o << fmt::format("{:<{}}  {:>7}  {:>8}  {:>11}  {:<24}  {:>4}  {:>8}  {}\n", "entrant", w0, "passes", "problems",
                   "mean median", "beats baseline (v3)", "runs", "tokens", "cost");
  for (const auto& e : r.per_entrant)
    o << fmt::format("{:<{}}  {:>7}  {:>8}  {:>11.3f}  {:<24}  {:>4}  {:>8}  {}\n", e.entrant, w0,
                     fmt::format("{}/{}", e.passes, e.trials), fmt::format("{}/{}", e.problems_passed, r.problems.size()),
                     e.mean_median, beats_text(r, e), e.runs, tokens_text(e.total_tokens),
                     cost_text(e.cost_usd, e.cost_complete, any_cost_known(r, e.entrant)));
  return o.str();
}

}  // namespace kb
