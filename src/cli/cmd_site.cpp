// `kbench site build` and `kbench site serve`: the static leaderboard, problem pages and transcript
// viewer (docs/site.md).
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "report/run_source.h"
#include "report/site_build.h"
#include "report/site_server.h"
#include "report/site_tools.h"
#include "store/results_db.h"

namespace kb::cli {
namespace fs = std::filesystem;

void register_site_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("site", "The static leaderboard site and transcript viewer (docs/site.md)");
  cmd->require_subcommand(1);

  auto* build = cmd->add_subcommand("build", "Write the site (works from file:// and any static host) from run directories or a results database");
  add_global_options(*build, g);
  struct BuildArgs {
    fs::path runs = "runs", out = "site", tools, db;
    bool force = false;
  };
  auto a = std::make_shared<BuildArgs>();
  build->add_option("--runs", a->runs, "Folder of run directories (kbench run --runs-dir); with --db, where runs the database does not locate are looked for")
      ->capture_default_str();
  auto* db_opt = build->add_option("--db", a->db, "Read the runs and results from this results database (kbench sweep, kbench db rebuild; e.g. results/kbench.db)");
  build->add_option("--out", a->out, "Where the site is written (incrementally: unchanged runs are kept)")->capture_default_str();
  build->add_option("--site-tools", a->tools, "The site tools folder with the syntax highlighter (default: $KBENCH_SITE_TOOLS, else ~/.cache/kbench/site; scripts/setup --site)");
  build->add_flag("--force", a->force, "Rewrite every run page, changed or not");
  build->callback([a, db_opt, &g, &exit_code] {
    resolve_defaults(g);
    std::unique_ptr<report::RunSource> source;
    try {
      source = db_opt->count() ? report::store_source(a->db, a->runs) : report::runs_dir_source(a->runs);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    report::SiteBuildOptions o;
    o.out = a->out;
    o.problems_dir = g.problems_dir;
    o.tools_dir = a->tools.empty() ? report::site_tools_dir() : a->tools;
    o.force = a->force;
    report::SiteBuildReport r;
    try {
      r = report::build_site(*source, o);
    } catch (const ResultsDbError& e) {
      throw UsageError(e.what());
    }
    if (g.json) {
      std::cout << nlohmann::json{{"out", a->out.string()},         {"source", r.source},
                                  {"runs", r.runs},                 {"runs_written", r.runs_written},
                                  {"runs_unchanged", r.runs_unchanged}, {"runs_removed", r.runs_removed},
                                  {"problems", r.problems},         {"highlighter", r.highlighter},
                                  {"warnings", r.warnings}}
                       .dump(2)
                << "\n";
    } else {
      for (const auto& w : r.warnings) std::cerr << "kbench site: warning: " << w << "\n";
      std::cout << fmt::format("site written to {}: {} runs ({} pages written, {} unchanged, {} removed), {} problems; open {}\n",
                               a->out.string(), r.runs, r.runs_written, r.runs_unchanged, r.runs_removed, r.problems,
                               (a->out / "index.html").string());
    }
    exit_code = kExitPass;
  });

  auto* serve = cmd->add_subcommand("serve", "Serve a built site on this machine over HTTP");
  struct ServeArgs {
    fs::path dir = "site";
    std::string host = "127.0.0.1";
    int port = 8000;
  };
  auto s = std::make_shared<ServeArgs>();
  serve->add_option("--dir", s->dir, "The built site")->capture_default_str();
  serve->add_option("--host", s->host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", s->port, "Port (0: any free port)")->capture_default_str();
  serve->callback([s, &exit_code] {
    try {
      report::serve_site(s->dir, s->host, s->port, [](const std::string& url) {
        std::cout << "serving the site at " << url << " (Ctrl-C stops)" << std::endl;
      });
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
