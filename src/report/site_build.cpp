#include "report/site_build.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/json_text.h"
#include "core/version.h"
#include "deck/problem.h"
#include "eval/hand_annotation.h"
#include "report/leaderboard.h"
#include "report/outcome.h"
#include "report/site_assets.h"
#include "report/site_pages.h"
#include "report/site_schema.h"
#include "report/site_tools.h"
#include "report/svg_charts.h"
#include "report/timeline.h"
#include "core/atomic_file.h"
#include "store/run_dir.h"

namespace kb::report {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Reads at most `limit` bytes; `size` gets the file's whole size.
std::string read_head(const fs::path& p, size_t limit, size_t& size, bool& truncated) {
  std::error_code ec;
  size = static_cast<size_t>(fs::file_size(p, ec));
  if (ec) size = 0;
  std::ifstream in(p, std::ios::binary);
  std::string s(std::min(size, limit), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  truncated = size > s.size();
  return s;
}

json read_json_or_null(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const std::exception&) {
    return nullptr;
  }
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  write_file_atomically(p, text);
}

// Writes only when the content differs: unchanged pages keep their modification time.
void write_if_changed(const fs::path& p, const std::string& text) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) == text.size()) {
    std::ifstream in(p, std::ios::binary);
    std::string old(text.size(), '\0');
    in.read(old.data(), static_cast<std::streamsize>(old.size()));
    if (old == text) return;
  }
  write(p, text);
}

// What a run's pages are made from: the files read, by size and modification time, and kbench's
// version (a new kbench may draw the same run differently).
std::string fingerprint(const fs::path& dir) {
  std::string fp = kbench_version();
  auto add = [&](const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      fp += "|" + p.filename().string() + ":-";
      return;
    }
    fp += fmt::format("|{}:{}:{}.{}", p.lexically_relative(dir).string(), st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  };
  for (const char* f : {"run.json", "result.json", "usage.json", "annotation.toml", "prompt.md", "eval.log", "gateway.jsonl",
                        "transcript/events.jsonl", "transcript/stdout.log", "transcript/stderr.log", "transcript/stdin.txt"})
    add(dir / f);
  std::error_code ec;
  if (fs::is_directory(dir / "solution", ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "solution", ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f);
  }
  return fp;
}

RunPageData read_run_page(const RunRow& row, size_t chunk_bytes, std::vector<std::string>& chunks, std::vector<size_t>& first_items) {
  RunPageData d;
  d.record = read_json_or_null(row.dir / "run.json");
  d.result = read_json_or_null(row.dir / "result.json");
  std::string workspace;
  if (d.record.is_object() && d.record.contains("workspace") && d.record["workspace"].is_string()) workspace = d.record["workspace"].get<std::string>();
  d.timeline = build_timeline(row.dir / "transcript/events.jsonl", workspace);
  std::error_code ec;
  if (fs::is_directory(row.dir / "solution", ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(row.dir / "solution", ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      SourceFile s;
      s.name = "solution/" + f.filename().string();
      s.text = read_head(f, kMaxShownSourceBytes, s.bytes, s.truncated);
      d.solution.push_back(std::move(s));
    }
  }
  for (const char* name : {"eval.log", "transcript/stderr.log", "transcript/stdout.log", "transcript/stdin.txt", "gateway.jsonl", "result.json",
                           "run.json", "prompt.md"}) {
    if (!fs::is_regular_file(row.dir / name, ec)) continue;
    SourceFile s;
    s.name = name;
    s.text = read_head(row.dir / name, kMaxShownLogBytes, s.bytes, s.truncated);
    d.logs.push_back(std::move(s));
  }
  if (fs::exists(row.dir / "annotation.toml", ec)) d.hand_annotation = to_json(validate_hand_annotation(row.dir / "annotation.toml", row.dir));
  // The timeline's items, cut into data files of about chunk_bytes each.
  std::string cur;
  for (size_t i = 0; i < d.timeline.items.size(); ++i) {
    const std::string item = json_text(d.timeline.items[i], -1);
    if (!cur.empty() && cur.size() + item.size() > chunk_bytes) {
      chunks.push_back(cur);
      cur.clear();
    }
    if (cur.empty()) first_items.push_back(i);
    cur += (cur.empty() ? "" : ",\n") + item;
  }
  if (!cur.empty()) chunks.push_back(cur);
  for (size_t k = 0; k < chunks.size(); ++k) d.chunk_files.push_back(fmt::format("events-{}.js", k));
  return d;
}

json summary_json(const RunRow& row, const RunPageData& d, const std::vector<std::string>& chunks, const std::vector<size_t>& first_items) {
  json calls = json::array();
  for (const auto& k : d.timeline.kbench_calls) calls.push_back({{"command", k.command}, {"outcome", k.outcome}});
  json files = json::array();
  for (size_t k = 0; k < chunks.size(); ++k) files.push_back({{"file", d.chunk_files[k]},
                     {"first", first_items[k]},
                     {"count", (k + 1 < first_items.size() ? first_items[k + 1] : d.timeline.items.size()) - first_items[k]},
                     {"bytes", chunks[k].size()}});
  return {{"schema", kSiteRunSchema},
          {"run", to_json(row)},
          {"outcome", run_outcome(row)},
          {"timeline",
           {{"events", d.timeline.events},
            {"items", d.timeline.items.size()},
            {"turns", d.timeline.turns},
            {"tool_calls", d.timeline.tool_calls},
            {"tool_errors", d.timeline.tool_errors},
            {"file_changes", d.timeline.file_changes},
            {"kbench_calls", calls},
            {"truncated", d.timeline.truncated},
            {"unreadable_lines", d.timeline.unreadable_lines},
            {"unknown_kinds", d.timeline.unknown_kinds},
            {"error", d.timeline.error},
            {"chunks", files}}}};
}

ProblemPageData problem_data(const std::vector<const RunRow*>& runs) {
  ProblemPageData d;
  // The prompt and the problem's facts from its newest run that has them.
  std::vector<const RunRow*> newest(runs.begin(), runs.end());
  std::sort(newest.begin(), newest.end(), [](const RunRow* a, const RunRow* b) { return a->started_at > b->started_at; });
  newest.erase(std::remove_if(newest.begin(), newest.end(), [](const RunRow* r) { return r->dir.empty(); }), newest.end());
  for (const RunRow* r : newest) {
    std::error_code ec;
    if (d.prompt.empty() && fs::is_regular_file(r->dir / "prompt.md", ec)) {
      size_t size;
      bool cut;
      d.prompt = read_head(r->dir / "prompt.md", kMaxShownLogBytes, size, cut);
    }
  }
  // Shapes, ceilings and the baseline from the newest result with timed shapes (else any result).
  json chosen;
  for (int pass = 0; pass < 2 && chosen.is_null(); ++pass)
    for (const RunRow* r : newest) {
      json res = read_json_or_null(r->dir / "result.json");
      if (!res.is_object() || !res.contains("shapes") || !res["shapes"].is_array() || res["shapes"].empty()) continue;
      const bool timed = res.contains("summary") && res["summary"].is_object() && res["summary"]["compute_peak"].is_number();
      if (pass == 0 && !timed) continue;
      chosen = std::move(res);
      break;
    }
  if (chosen.is_null()) return d;
  for (const auto& s : chosen["shapes"])
    d.shapes.push_back({{"label", s.value("label", std::string())}, {"dims", s.contains("dims") ? s["dims"] : json::object()},
                        {"flops", s.value("flops", 0.0)}, {"bytes", s.value("bytes", 0.0)}});
  const json& sum = chosen.contains("summary") ? chosen["summary"] : json::object();
  d.ceilings = {{"device", chosen.value("device", std::string())},
                {"regime", sum.value("regime", std::string())},
                {"compute_peak_key", sum.value("compute_peak_key", std::string())},
                {"memory_peak_key", sum.value("memory_peak_key", std::string())},
                {"compute_peak", sum.contains("compute_peak") ? sum["compute_peak"] : json(nullptr)},
                {"memory_peak", sum.contains("memory_peak") ? sum["memory_peak"] : json(nullptr)},
                {"ceilings", sum.value("ceilings", std::string())}};
  const json& base = chosen.contains("baseline") ? chosen["baseline"] : json(nullptr);
  if (base.is_object())
    d.baseline = {{"description", chosen.value("baseline_description", std::string("vendor library"))},
                  {"peak_fraction", base.contains("summary") && base["summary"].is_object() ? base["summary"].value("peak_fraction_geomean", json(nullptr)) : json(nullptr)},
                  {"shapes", base.contains("shapes") ? base["shapes"] : json::array()}};
  // A roofline per shape: each entrant's best passing run, and the baseline.
  if (!sum["compute_peak"].is_number() || !sum["memory_peak"].is_number()) return d;
  std::map<std::string, std::pair<double, json>> best;  // entrant -> (peak, result)
  for (const RunRow* r : runs) {
    if (run_outcome(*r) != outcome::pass || r->dir.empty() || !r->peak_fraction) continue;
    auto it = best.find(entrant_label(*r));
    if (it != best.end() && it->second.first >= *r->peak_fraction) continue;
    best[entrant_label(*r)] = {*r->peak_fraction, read_json_or_null(r->dir / "result.json")};
  }
  for (size_t i = 0; i < d.shapes.size(); ++i) {
    std::vector<RooflinePoint> pts;
    auto point = [&](const json& res, const std::string& label, bool ref) {
      if (!res.is_object() || !res.contains("shapes") || !res["shapes"].is_array() || res["shapes"].size() <= i) return;
      const json& sh = res["shapes"][i];
      if (!sh.contains("roofline") || !sh["roofline"].is_object()) return;
      const json& rf = sh["roofline"];
      pts.push_back({label, rf.value("flops_per_s", 0.0), rf.value("bytes_per_s", 0.0), sh.value("flops", 0.0), sh.value("bytes", 0.0), ref});
    };
    for (const auto& [label, b] : best) point(b.second, label, false);
    if (base.is_object()) point(base, "baseline", true);
    const std::string svg = roofline_svg("Roofline, shape " + d.shapes[i].value("label", std::to_string(i)), sum["compute_peak"].get<double>(),
                                         sum["memory_peak"].get<double>(), pts);
    if (!svg.empty()) d.rooflines.push_back(svg);
  }
  return d;
}

std::string iso_now() { return iso_utc(std::chrono::system_clock::now()); }

}  // namespace

SiteBuildReport build_site(RunSource& source, const SiteBuildOptions& o) {
  SiteBuildReport rep;
  SiteData data = source.load();
  const std::vector<RunRow>& rows = data.rows;
  rep.runs = static_cast<int>(rows.size());
  rep.source = source.describe();
  SiteContext ctx;
  ctx.source = rep.source;
  ctx.generated_at = iso_now();
  ctx.kbench_version = kbench_version();
  for (const auto& w : data.warnings) rep.warnings.push_back(w);
  if (!o.problems_dir.empty()) {
    try {
      // The site's "level" filter groups by deck, and within a deck by KernelBench v3's level where
      // the problem has one: "hard", "v3 L1".
      for (const auto& p : load_deck(o.problems_dir))
        ctx.problems[p.name] = {p.name, p.level ? fmt::format("{} L{}", p.deck, *p.level) : p.deck, p.description};
    } catch (const std::exception& e) {
      rep.warnings.push_back(std::string("problem levels unknown: ") + e.what());
    }
  }
  fs::create_directories(o.out);

  // Assets: kbench's own, then the highlighter from the site tools folder when it is installed.
  for (const auto& a : site_assets()) {
    std::string bytes(a.bytes);
    if (a.name == "site.css") bytes += "\n" + heat_css();
    write_if_changed(o.out / "assets" / std::string(a.name), bytes);
  }
  std::error_code ec;
  const fs::path hl_js = highlighter_script(o.tools_dir), hl_css = highlighter_style(o.tools_dir);
  if (!o.tools_dir.empty() && fs::is_regular_file(hl_js, ec) && fs::is_regular_file(hl_css, ec)) {
    size_t size;
    bool cut;
    write_if_changed(o.out / "assets/highlight.min.js", read_head(hl_js, size_t{64} << 20, size, cut));
    write_if_changed(o.out / "assets/highlight.css", read_head(hl_css, size_t{64} << 20, size, cut));
    ctx.highlighter = rep.highlighter = true;
  } else {
    fs::remove(o.out / "assets/highlight.min.js", ec);
    fs::remove(o.out / "assets/highlight.css", ec);
    rep.warnings.push_back("no syntax highlighter in " + (o.tools_dir.empty() ? std::string("(no site tools folder)") : o.tools_dir.string()) +
                           ": sources are shown plain (scripts/setup --site installs it)");
  }

  // Run pages, incrementally.
  const json old_manifest = read_json_or_null(o.out / "manifest.json");
  const json old_runs = old_manifest.is_object() && old_manifest.contains("runs") ? old_manifest["runs"] : json::object();
  json manifest_runs = json::object();
  std::set<std::string> live;
  for (const RunRow& row : rows) {
    const std::string rel = site_run_dir(row.id);
    live.insert(fs::path(rel).filename().string());
    if (!row.warnings.empty()) rep.warnings.push_back(row.id + ": " + row.warnings.front());
    // A run the database knows whose directory is gone: a page with the database's figures only.
    const std::string fp = row.dir.empty() ? "no directory|" + kbench_version() : fingerprint(row.dir);
    manifest_runs[row.id] = {{"fingerprint", fp}, {"page", rel + "/index.html"}};
    if (!o.force && old_runs.contains(row.id) && old_runs[row.id].value("fingerprint", std::string()) == fp &&
        fs::is_regular_file(o.out / rel / "index.html", ec)) {
      ++rep.runs_unchanged;
      continue;
    }
    std::vector<std::string> chunks;
    std::vector<size_t> first_items;
    RunPageData d;
    if (!row.dir.empty()) d = read_run_page(row, o.chunk_bytes, chunks, first_items);
    else d.timeline.error = "the run directory is not available: no transcript";
    const fs::path dir = o.out / rel;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    const json summary = summary_json(row, d, chunks, first_items);
    write(dir / "data.json", json_text(summary, 1));
    write(dir / "run.js", "kbRun(" + json_text(summary, -1) + ");\n");
    for (size_t k = 0; k < chunks.size(); ++k) write(dir / d.chunk_files[k], fmt::format("kbChunk({},[\n{}\n]);\n", k, chunks[k]));
    write(dir / "index.html", run_html(row, d, ctx));
    ++rep.runs_written;
  }
  // Pages of runs that are gone.
  if (fs::is_directory(o.out / "runs", ec))
    for (const auto& e : fs::directory_iterator(o.out / "runs", ec))
      if (e.is_directory() && !live.count(e.path().filename().string())) {
        fs::remove_all(e.path(), ec);
        ++rep.runs_removed;
      }

  // The leaderboard and its data.
  const auto boards = build_leaderboard(data);
  write_if_changed(o.out / "index.html", leaderboard_html(boards, rows, ctx));
  json jb = json::array();
  for (const auto& b : boards) jb.push_back(to_json(b));
  json jr = json::array();
  for (const auto& r : rows) {
    json j = to_json(r);
    j["outcome"] = run_outcome(r);
    j["page"] = site_run_dir(r.id) + "/index.html";
    jr.push_back(std::move(j));
  }
  write(o.out / "data/leaderboard.json",
        json_text({{"schema", kSiteSchema}, {"generated_at", ctx.generated_at}, {"kbench_version", ctx.kbench_version},
                   {"source", ctx.source}, {"boards", jb}, {"runs", jr}},
                  1));

  // Problem pages.
  std::map<std::string, std::vector<const RunRow*>> by_problem;
  for (const auto& r : rows) by_problem[r.problem].push_back(&r);
  std::set<std::string> pages;
  for (const auto& [p, runs] : by_problem) {
    const std::string rel = site_problem_page(p);
    pages.insert(fs::path(rel).filename().string());
    write_if_changed(o.out / rel, problem_html(p, runs, problem_data(runs), ctx));
  }
  rep.problems = static_cast<int>(by_problem.size());
  if (fs::is_directory(o.out / "problems", ec))
    for (const auto& e : fs::directory_iterator(o.out / "problems", ec))
      if (!pages.count(e.path().filename().string())) fs::remove(e.path(), ec);

  write(o.out / "manifest.json", json_text({{"schema", kSiteManifestSchema}, {"kbench_version", ctx.kbench_version}, {"runs", manifest_runs}}, 1));
  return rep;
}

}  // namespace kb::report
