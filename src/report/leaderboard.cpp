#include "report/leaderboard.h"

#include <algorithm>

#include "report/outcome.h"

namespace kb::report {
using json = nlohmann::json;

const Cell* DeviceBoard::cell(const std::string& entrant, const std::string& problem) const {
  auto it = cells.find({entrant, problem});
  return it == cells.end() ? nullptr : &it->second;
}

namespace {

// Worse annotations win the cell's flag: a reader must see a hack before a leak before the rest.
int flag_rank(const std::string& v) {
  if (v == "reward_hack") return 4;
  if (v == "rubric_leak") return 3;
  if (v == "bug") return 2;
  if (v == "interesting") return 1;
  return 0;
}

// The word for a cell without a score: its most frequent outcome among the counted trials, else
// among all its runs.
std::string cell_word(const Cell& c) {
  std::map<std::string, int> counted, all;
  for (const RunRow* r : c.runs) {
    const std::string o = run_outcome(*r);
    ++all[o];
    if (r->counted) ++counted[o];
  }
  const auto& m = counted.empty() ? all : counted;
  std::string best;
  int n = -1;
  for (const auto& [o, k] : m)
    if (k > n) best = o, n = k;
  return best;
}

}  // namespace

std::vector<DeviceBoard> build_leaderboard(const SiteData& d) {
  std::map<std::string, const RunRow*> row_of;
  for (const auto& r : d.rows) row_of[r.id] = &r;
  std::vector<DeviceBoard> out;
  for (const auto& [device, res] : d.by_device) {
    DeviceBoard b;
    b.device = device;
    b.problems = res.problems;
    b.compared_problems = res.compared_problems;
    for (size_t i = 0; i < res.entrants.size(); ++i) {
      const kb::EntrantResult& er = res.per_entrant[i];
      EntrantTotals e;
      e.label = er.entrant, e.agent = er.agent, e.model = er.model, e.effort = er.effort;
      e.trials = er.trials, e.passes = er.passes, e.problems_passed = er.problems_passed, e.runs = er.runs;
      e.compared_trials = er.compared_trials, e.beats = er.beats, e.problems_beaten = er.problems_beaten;
      e.mean_score = er.mean_median;
      e.cost_usd = er.cost_usd, e.cost_complete = er.cost_complete;
      e.input_tokens = er.input_tokens, e.output_tokens = er.output_tokens, e.cache_read_tokens = er.cache_read_tokens;
      e.cache_write_tokens = er.cache_write_tokens, e.reasoning_tokens = er.reasoning_tokens;
      for (size_t j = 0; j < res.problems.size(); ++j) {
        const kb::CellResult& cr = res.cell(i, j);
        Cell c;
        c.trials = cr.trials, c.passes = cr.passes, c.not_counted = cr.not_counted;
        c.median = cr.median, c.spread = cr.spread, c.best = cr.best, c.beats = cr.beats;
        for (const auto& r : res.runs)
          if (r.entrant == er.entrant && r.problem == cr.problem)
            if (auto it = row_of.find(r.id); it != row_of.end()) {
              c.runs.push_back(it->second);
              if (it->second->cost_usd) e.cost_known = true;
            }
        if (c.runs.empty()) continue;  // no run of this entrant on this problem
        std::stable_sort(c.runs.begin(), c.runs.end(), [](const RunRow* a, const RunRow* b) { return a->trial < b->trial; });
        for (const RunRow* r : c.runs) {
          const std::string& v = !r->hand_annotation.empty() ? r->hand_annotation : r->annotation;
          if (flag_rank(v) > flag_rank(c.flag)) c.flag = v;
          if (!r->hand_annotation.empty()) c.annotated = true;
        }
        c.scored = c.passes > 0 && c.best.has_value();
        c.outcome = c.scored ? std::string(outcome::pass) : c.passes > 0 ? std::string(outcome::pass_unscored) : cell_word(c);
        b.cells[{er.entrant, cr.problem}] = std::move(c);
      }
      b.entrants.push_back(e);
    }
    std::stable_sort(b.entrants.begin(), b.entrants.end(), [](const EntrantTotals& x, const EntrantTotals& y) {
      if (x.problems_passed != y.problems_passed) return x.problems_passed > y.problems_passed;
      return x.mean_score > y.mean_score;
    });
    out.push_back(std::move(b));
  }
  return out;
}

json to_json(const DeviceBoard& b) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  json entrants = json::array();
  for (const auto& e : b.entrants) {
    json cells = json::object();
    for (const auto& p : b.problems) {
      const Cell* c = b.cell(e.label, p);
      if (!c) continue;
      json runs = json::array();
      for (const RunRow* r : c->runs)
        runs.push_back({{"id", r->id}, {"trial", r->trial}, {"outcome", run_outcome(*r)}, {"counted", r->counted}});
      cells[p] = {{"n", c->trials},          {"passes", c->passes},     {"not_counted", c->not_counted},
                  {"median", c->median},     {"spread", c->spread},     {"best", opt(c->best)},
                  {"scored", c->scored},     {"outcome", c->outcome},   {"flag", c->flag},
                  {"annotated", c->annotated}, {"beats_baseline", opt(c->beats)}, {"runs", runs}};
    }
    entrants.push_back({{"label", e.label},
                        {"agent", e.agent},
                        {"model", e.model},
                        {"effort", e.effort},
                        {"trials", e.trials},
                        {"passes", e.passes},
                        {"problems_passed", e.problems_passed},
                        {"compared_trials", e.compared_trials},
                        {"beats_baseline", e.beats},
                        {"problems_beaten", e.problems_beaten},
                        {"runs", e.runs},
                        {"mean_score", e.mean_score},
                        {"cost_usd", e.cost_known ? json(e.cost_usd) : json(nullptr)},
                        {"cost_complete", e.cost_complete},
                        {"tokens",
                         {{"input", e.input_tokens},
                          {"output", e.output_tokens},
                          {"cache_read", e.cache_read_tokens},
                          {"cache_write", e.cache_write_tokens},
                          {"reasoning", e.reasoning_tokens}}},
                        {"cells", cells}});
  }
  return {{"device", b.device}, {"problems", b.problems}, {"compared_problems", b.compared_problems}, {"entrants", entrants}};
}

}  // namespace kb::report
