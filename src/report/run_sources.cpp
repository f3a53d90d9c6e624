// The two RunSources: run directories (indexed into a temporary results database) and a results
// database. Both read the store's results per device kind.
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "report/run_source.h"
#include "store/results_db.h"
#include "store/run_index.h"

namespace kb::report {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> devices_of(sql::Database& db) {
  std::vector<std::string> out;
  auto st = db.prepare("SELECT DISTINCT coalesce(device, '') FROM runs ORDER BY 1");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

// The store's results for each device kind, and each row's place in them.
void read_results(sql::Database& db, SiteData& d) {
  std::map<std::string, const kb::RunResult*> by_id;
  for (const auto& dev : devices_of(db)) {
    kb::ResultsFilter f;
    f.device = dev;
    d.by_device[dev.empty() ? "(unknown device)" : dev] = kb::load_results(db, f);
  }
  for (const auto& [dev, res] : d.by_device)
    for (const auto& r : res.runs) by_id[r.id] = &r;
  for (auto& row : d.rows) {
    auto it = by_id.find(row.id);
    if (it == by_id.end()) {
      row.in_store = false;
      row.warnings.push_back("not in the results store (its run.json could not be indexed): not counted on the leaderboard");
      continue;
    }
    row.in_store = true;
    row.counted = it->second->counted;
    // A run whose result.json is gone still has the verdict its run.json recorded, which the store
    // counts by: the page says the same (and still warns that the file is missing).
    if (row.verdict.empty() && !it->second->verdict.empty()) {
      row.verdict = it->second->verdict;
      row.failure = it->second->failure;
      if (!row.peak_fraction) row.peak_fraction = it->second->peak_fraction;
    }
    row.infra_failure = it->second->infra_failure;
    if (row.device.empty() || row.device == "(unknown device)") row.device = it->second->device.empty() ? "(unknown device)" : it->second->device;
  }
}

// A scratch folder removed when the source is done with it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kbench-site-XXXXXX").string();
    if (!mkdtemp(t.data())) throw std::runtime_error("cannot create a temporary folder in " + fs::temp_directory_path().string());
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

class RunsDirSource : public RunSource {
 public:
  explicit RunsDirSource(fs::path root) : root_(std::move(root)) {}

  SiteData load() override {
    SiteData d;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root_))
      if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs)
      if (auto row = read_run_row(dir)) d.rows.push_back(std::move(*row));
    count_ = d.rows.size();
    TempDir tmp;
    sql::Database db = open_results_db(tmp.path / "kbench.db", DbAccess::create);
    const RebuildReport rep = rebuild_from_runs(db, root_);
    for (const auto& s : rep.skipped) d.warnings.push_back("results store skipped " + s);
    read_results(db, d);
    return d;
  }

  std::string describe() const override {
    return root_.filename().string() + "/ (" + std::to_string(count_) + " run director" + (count_ == 1 ? "y" : "ies") + ")";
  }

 private:
  fs::path root_;
  size_t count_ = 0;
};

class StoreSource : public RunSource {
 public:
  StoreSource(fs::path file, fs::path runs) : file_(std::move(file)), runs_(std::move(runs)) {}

  SiteData load() override {
    SiteData d;
    sql::Database db = open_results_db(file_, DbAccess::read_only);
    std::vector<std::pair<std::string, std::string>> runs;  // id, dir
    auto st = db.prepare("SELECT id, coalesce(dir, '') FROM runs ORDER BY id");
    while (st.step()) runs.emplace_back(st.text(0), st.text(1));
    for (const auto& [id, recorded] : runs) {
      fs::path dir = recorded;
      std::error_code ec;
      if ((dir.empty() || !fs::is_directory(dir, ec)) && !runs_.empty()) dir = runs_ / id;
      std::optional<RunRow> row = fs::is_directory(dir, ec) ? read_run_row(dir) : std::nullopt;
      if (!row) {
        row = RunRow{};
        row->id = id;
        row->warnings.push_back("run directory not found (" + (recorded.empty() ? id : recorded) + "): only the database's figures are shown");
      }
      d.rows.push_back(std::move(*row));
    }
    count_ = d.rows.size();
    read_results(db, d);
    // Rows without their directory take the database's figures.
    for (const auto& [dev, res] : d.by_device)
      for (const auto& r : res.runs)
        for (auto& row : d.rows)
          if (row.id == r.id && row.dir.empty()) fill_from_store(row, r);
    return d;
  }

  std::string describe() const override {
    return file_.filename().string() + " (" + std::to_string(count_) + " run" + (count_ == 1 ? "" : "s") + ")";
  }

 private:
  static void fill_from_store(RunRow& row, const kb::RunResult& r) {
    row.agent = r.agent, row.model = r.model, row.effort = r.effort, row.problem = r.problem, row.target = r.target;
    row.device = r.device.empty() ? "(unknown device)" : r.device;
    row.trial = r.trial, row.status = r.status, row.verdict = r.verdict, row.failure = r.failure;
    row.peak_fraction = r.peak_fraction, row.sol_fraction = r.sol_fraction, row.annotation = r.annotation;
    row.tokens = {r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens, r.reasoning_tokens};
    row.tokens_source = "store";
    row.cost_usd = r.cost_usd, row.cost_complete = r.cost_complete, row.agent_seconds = r.agent_seconds, row.started_at = r.started_at;
  }

  fs::path file_, runs_;
  size_t count_ = 0;
};

}  // namespace

std::unique_ptr<RunSource> runs_dir_source(const fs::path& runs_root) {
  std::error_code ec;
  if (!fs::is_directory(runs_root, ec))
    throw std::invalid_argument("--runs " + runs_root.string() + ": no such folder (a folder of run directories, as `kbench run --runs-dir` makes)");
  return std::make_unique<RunsDirSource>(runs_root);
}

std::unique_ptr<RunSource> store_source(const fs::path& db_file, const fs::path& runs_root) {
  std::error_code ec;
  if (!fs::is_regular_file(db_file, ec))
    throw std::invalid_argument("--db " + db_file.string() + ": no such results database (a sweep or `kbench db rebuild RUNS_DIR` makes one)");
  return std::make_unique<StoreSource>(db_file, runs_root);
}

}  // namespace kb::report
