#include "report/leaderboard.h"

#include <algorithm>
#include <set>

#include "report/outcome.h"

namespace kb::report {
using json = nlohmann::json;

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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
    if (counts_as_trial(o)) ++counted[o];
  }
  const auto& m = counted.empty() ? all : counted;
  std::string best;
  int n = -1;
  for (const auto& [o, k] : m)
    if (k > n) best = o, n = k;
  return best;
}

void finish_cell(Cell& c) {
  std::sort(c.runs.begin(), c.runs.end(), [](const RunRow* a, const RunRow* b) {
    return a->trial != b->trial ? a->trial < b->trial : a->id < b->id;
  });
  std::vector<double> scores;
  for (const RunRow* r : c.runs) {
    const std::string o = run_outcome(*r);
    if (!counts_as_trial(o)) continue;
    ++c.trials;
    if (o == outcome::pass || o == outcome::pass_unscored) ++c.passes;
    if (o == outcome::pass) scores.push_back(*r->peak_fraction);
    else if (o != outcome::pass_unscored) scores.push_back(0.0);
    const std::string& v = !r->hand_annotation.empty() ? r->hand_annotation : r->annotation;
    if (flag_rank(v) > flag_rank(c.flag)) c.flag = v;
    if (!r->hand_annotation.empty()) c.annotated = true;
  }
  for (const RunRow* r : c.runs) {  // not-counted runs still carry their hand annotations
    if (!r->hand_annotation.empty()) c.annotated = true;
    if (flag_rank(r->hand_annotation) > flag_rank(c.flag)) c.flag = r->hand_annotation;
  }
  c.scored = static_cast<int>(scores.size());
  // A cell whose trials are all failures has a median of 0: shown as its failure's word.
  const bool any_pass_scored = std::any_of(c.runs.begin(), c.runs.end(), [](const RunRow* r) {
    return run_outcome(*r) == outcome::pass;
  });
  if (!scores.empty() && any_pass_scored) {
    c.median = median_of(scores);
    c.min = *std::min_element(scores.begin(), scores.end());
    c.max = *std::max_element(scores.begin(), scores.end());
  }
  c.outcome = c.median ? std::string(outcome::pass) : cell_word(c);
  if (!c.median && c.passes > 0) c.outcome = outcome::pass_unscored;
}

}  // namespace

std::vector<DeviceBoard> build_leaderboard(const std::vector<RunRow>& rows) {
  std::map<std::string, DeviceBoard> boards;
  for (const RunRow& r : rows) {
    DeviceBoard& b = boards[r.device];
    b.device = r.device;
    b.cells[{entrant_label(r), r.problem}].runs.push_back(&r);
  }
  std::vector<DeviceBoard> out;
  for (auto& [device, b] : boards) {
    std::set<std::string> problems;
    std::map<std::string, EntrantTotals> entrants;
    for (auto& [key, c] : b.cells) {
      finish_cell(c);
      problems.insert(key.second);
      EntrantTotals& e = entrants[key.first];
      const RunRow& first = *c.runs.front();
      e.label = key.first, e.agent = first.agent, e.model = first.model, e.effort = first.effort;
      e.trials += c.trials;
      e.passes += c.passes;
      if (c.passes > 0) ++e.problems_passed;
      for (const RunRow* r : c.runs) {
        ++e.runs;
        if (r->cost_usd) e.cost_usd = e.cost_usd.value_or(0) + *r->cost_usd;
        if (!r->cost_usd || !r->cost_complete) e.cost_complete = false;
        e.input_tokens += r->tokens.input.value_or(0);
        e.output_tokens += r->tokens.output.value_or(0);
        e.cache_read_tokens += r->tokens.cache_read.value_or(0);
        e.cache_write_tokens += r->tokens.cache_write.value_or(0);
        e.reasoning_tokens += r->tokens.reasoning.value_or(0);
      }
    }
    b.problems.assign(problems.begin(), problems.end());
    for (auto& [label, e] : entrants) {
      double sum = 0;
      for (const auto& p : b.problems)
        if (const Cell* c = b.cell(label, p); c && c->median) sum += *c->median;
      e.mean_score = b.problems.empty() ? std::nullopt : std::optional<double>(sum / b.problems.size());
      b.entrants.push_back(e);
    }
    std::stable_sort(b.entrants.begin(), b.entrants.end(), [](const EntrantTotals& x, const EntrantTotals& y) {
      if (x.problems_passed != y.problems_passed) return x.problems_passed > y.problems_passed;
      return x.mean_score.value_or(0) > y.mean_score.value_or(0);
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
      for (const RunRow* r : c->runs) runs.push_back({{"id", r->id}, {"trial", r->trial}, {"outcome", run_outcome(*r)}});
      cells[p] = {{"n", c->trials},        {"passes", c->passes}, {"scored", c->scored},
                  {"median", opt(c->median)}, {"min", opt(c->min)},  {"max", opt(c->max)},
                  {"outcome", c->outcome},  {"flag", c->flag},     {"annotated", c->annotated},
                  {"runs", runs}};
    }
    entrants.push_back({{"label", e.label},
                        {"agent", e.agent},
                        {"model", e.model},
                        {"effort", e.effort},
                        {"trials", e.trials},
                        {"passes", e.passes},
                        {"problems_passed", e.problems_passed},
                        {"runs", e.runs},
                        {"mean_score", opt(e.mean_score)},
                        {"cost_usd", opt(e.cost_usd)},
                        {"cost_complete", e.cost_complete},
                        {"tokens",
                         {{"input", e.input_tokens},
                          {"output", e.output_tokens},
                          {"cache_read", e.cache_read_tokens},
                          {"cache_write", e.cache_write_tokens},
                          {"reasoning", e.reasoning_tokens}}},
                        {"cells", cells}});
  }
  return {{"device", b.device}, {"problems", b.problems}, {"entrants", entrants}};
}

}  // namespace kb::report
