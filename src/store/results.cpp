#include "store/results.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "store/run_dir.h"
#include "verdict/reason.h"

namespace kb {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Results load_results(sql::Database& db, const ResultsFilter& filter) {
  Results res;
  res.sweep = filter.sweep;
  auto st = db.prepare(
      "SELECT id, dir, coalesce(sweep_id, ''), entrant, agent, model, coalesce(effort, ''), problem, coalesce(target, ''), "
      "coalesce(device, ''), trial, status, coalesce(infra_failure, ''), coalesce(verdict, ''), coalesce(failure, ''), "
      "peak_fraction, sol_fraction, agent_seconds, coalesce(input_tokens, 0), coalesce(output_tokens, 0), "
      "coalesce(cache_read_tokens, 0), coalesce(cache_write_tokens, 0), coalesce(reasoning_tokens, 0), "
      "coalesce(total_tokens, 0), cost_usd, coalesce(cost_complete, 0), coalesce(annotation, ''), coalesce(started_at, ''), "
      "coalesce(finished_at, ''), beats_baseline, speedup_vs_baseline FROM runs WHERE (?1 IS NULL OR sweep_id = ?1) AND (?2 IS NULL OR coalesce(device, '') = ?2) "
      "ORDER BY entrant, problem, trial, started_at, id");
  if (filter.sweep) st.bind(1, *filter.sweep);
  else st.bind_null(1);
  if (filter.device) st.bind(2, *filter.device);
  else st.bind_null(2);
  while (st.step()) {
    RunResult r;
    int c = 0;
    r.id = st.text(c++);
    r.dir = st.text(c++);
    r.sweep = st.text(c++);
    r.entrant = st.text(c++);
    r.agent = st.text(c++);
    r.model = st.text(c++);
    r.effort = st.text(c++);
    r.problem = st.text(c++);
    r.target = st.text(c++);
    r.device = st.text(c++);
    r.trial = static_cast<int>(st.int64(c++));
    r.status = st.text(c++);
    r.infra_failure = st.text(c++);
    r.verdict = st.text(c++);
    r.failure = st.text(c++);
    r.peak_fraction = st.opt_real(c++);
    r.sol_fraction = st.opt_real(c++);
    r.agent_seconds = st.opt_real(c++);
    r.input_tokens = st.int64(c++);
    r.output_tokens = st.int64(c++);
    r.cache_read_tokens = st.int64(c++);
    r.cache_write_tokens = st.int64(c++);
    r.reasoning_tokens = st.int64(c++);
    r.total_tokens = st.int64(c++);
    r.cost_usd = st.opt_real(c++);
    r.cost_complete = st.int64(c++) != 0;
    r.annotation = st.text(c++);
    r.started_at = st.text(c++);
    r.finished_at = st.text(c++);
    if (const auto beats = st.opt_int64(c++)) r.beats_baseline = *beats != 0;
    r.speedup_vs_baseline = st.opt_real(c++);
    r.score = parse_verdict(r.verdict) == Verdict::pass ? r.peak_fraction.value_or(0) : 0;
    res.runs.push_back(std::move(r));
  }

  // Which run stands for each trial: the first started result of the model (the ORDER BY above).
  std::set<std::tuple<std::string, std::string, std::string, int>> taken;
  std::set<std::string> entrants, problems, compared;
  for (auto& r : res.runs) {
    entrants.insert(r.entrant);
    problems.insert(r.problem);
    if (r.beats_baseline) compared.insert(r.problem);
    const bool result = r.infra_failure.empty() && (r.status == run_status::complete || r.status == run_status::killed_at_budget);
    if (result) r.counted = taken.insert({r.sweep, r.entrant, r.problem, r.trial}).second;
  }
  res.entrants.assign(entrants.begin(), entrants.end());
  res.problems.assign(problems.begin(), problems.end());
  res.compared_problems.assign(compared.begin(), compared.end());
  std::map<std::string, size_t> ei, pi;
  for (size_t i = 0; i < res.entrants.size(); ++i) ei[res.entrants[i]] = i;
  for (size_t j = 0; j < res.problems.size(); ++j) pi[res.problems[j]] = j;

  res.cells.resize(res.entrants.size() * res.problems.size());
  for (size_t i = 0; i < res.entrants.size(); ++i)
    for (size_t j = 0; j < res.problems.size(); ++j) {
      res.cells[i * res.problems.size() + j].entrant = res.entrants[i];
      res.cells[i * res.problems.size() + j].problem = res.problems[j];
    }
  res.per_entrant.resize(res.entrants.size());
  for (size_t k = 0; k < res.runs.size(); ++k) {
    const RunResult& r = res.runs[k];
    const size_t i = ei[r.entrant], j = pi[r.problem];
    CellResult& cell = res.cells[i * res.problems.size() + j];
    EntrantResult& e = res.per_entrant[i];
    e.entrant = r.entrant;
    e.agent = r.agent;
    e.model = r.model;
    e.effort = r.effort;
    ++e.runs;
    e.input_tokens += r.input_tokens;
    e.output_tokens += r.output_tokens;
    e.cache_read_tokens += r.cache_read_tokens;
    e.cache_write_tokens += r.cache_write_tokens;
    e.reasoning_tokens += r.reasoning_tokens;
    e.total_tokens += r.total_tokens;
    e.cost_usd += r.cost_usd.value_or(0);
    if (!r.cost_usd || !r.cost_complete) e.cost_complete = false;
    e.agent_seconds += r.agent_seconds.value_or(0);
    if (!r.counted) {
      ++cell.not_counted;
      continue;
    }
    cell.runs.push_back(k);
  }
  for (size_t i = 0; i < res.entrants.size(); ++i) {
    EntrantResult& e = res.per_entrant[i];
    double sum_median = 0;
    for (size_t j = 0; j < res.problems.size(); ++j) {
      CellResult& cell = res.cells[i * res.problems.size() + j];
      std::sort(cell.runs.begin(), cell.runs.end(), [&](size_t a, size_t b) { return res.runs[a].trial < res.runs[b].trial; });
      std::vector<double> scores;
      const bool is_compared = compared.count(res.problems[j]) > 0;
      if (is_compared) cell.beats = 0;
      for (size_t k : cell.runs) {
        const RunResult& r = res.runs[k];
        scores.push_back(r.score);
        if (is_compared && parse_verdict(r.verdict) == Verdict::pass && r.beats_baseline.value_or(false)) ++*cell.beats;
        if (parse_verdict(r.verdict) == Verdict::pass) {
          ++cell.passes;
          if (r.peak_fraction && (!cell.best || *r.peak_fraction > *cell.best)) cell.best = r.peak_fraction;
          // A pass without a peak fraction (a --check-only sweep) still counts as a pass; best stays
          // unset unless another trial was timed.
        }
      }
      cell.trials = static_cast<int>(scores.size());
      cell.median = median_of(scores);
      cell.spread = scores.empty() ? 0 : *std::max_element(scores.begin(), scores.end()) - *std::min_element(scores.begin(), scores.end());
      e.trials += cell.trials;
      e.passes += cell.passes;
      if (cell.passes > 0) ++e.problems_passed;
      if (cell.beats) {
        e.compared_trials += cell.trials;
        e.beats += *cell.beats;
        if (*cell.beats > 0) ++e.problems_beaten;
      }
      sum_median += cell.median;
    }
    e.mean_median = res.problems.empty() ? 0 : sum_median / static_cast<double>(res.problems.size());
  }
  return res;
}

}  // namespace kb
