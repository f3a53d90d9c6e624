// `kbench annotate validate RUN_DIR_OR_FILE`: checks a run's hand annotation (annotation.toml,
// docs/annotations.md): its verdict and fields, and that every quote is really in the file and at
// the lines it names.
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "core/json_text.h"
#include "eval/hand_annotation.h"

namespace kb::cli {
namespace fs = std::filesystem;

void register_annotate_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("annotate", "Hand annotations of agent runs (annotation.toml)");
  cmd->require_subcommand(1);
  auto* validate = cmd->add_subcommand(
      "validate", "Check a run's annotation.toml: fields, verdict, and every quote against the run's files");
  add_global_options(*validate, g);
  auto target = std::make_shared<fs::path>();
  validate->add_option("RUN_DIR_OR_FILE", *target,
                       "A run directory (its annotation.toml is read) or an annotation file (quotes are resolved "
                       "against the folder holding it)")
      ->required();
  validate->callback([target, &g, &exit_code] {
    std::error_code ec;
    fs::path file = *target, run_dir;
    if (fs::is_directory(file, ec)) {
      run_dir = file;
      file = file / "annotation.toml";
      if (!fs::exists(file, ec))
        throw UsageError(fmt::format("{} holds no annotation.toml (docs/annotations.md shows the format)", target->string()));
    } else if (fs::exists(file, ec)) {
      run_dir = fs::absolute(file).parent_path();
    } else {
      throw UsageError(fmt::format("{} does not exist; expected a run directory or an annotation.toml", target->string()));
    }
    const HandAnnotationCheck c = validate_hand_annotation(file, run_dir);
    if (g.json) {
      std::cout << kb::json_text(to_json(c)) << "\n";
    } else {
      for (const auto& i : c.issues)
        std::cout << fmt::format("{}: {}{}\n", i.file, i.field.empty() ? "" : i.field + ": ", i.message);
      if (c.valid())
        std::cout << fmt::format("{}: valid ({}, {} quote{})\n", file.string(), c.annotation->verdict,
                                 c.annotation->quotes.size(), c.annotation->quotes.size() == 1 ? "" : "s");
      else
        std::cout << fmt::format("{}: {} problem{}\n", file.string(), c.issues.size(), c.issues.size() == 1 ? "" : "s");
    }
    exit_code = c.valid() ? kExitPass : kExitFail;
  });
}

}  // namespace kb::cli
