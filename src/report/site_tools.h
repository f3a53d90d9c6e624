// The site tools folder: what `scripts/setup --site` installs from npm (tools/site/package.json):
// highlight.js's browser build, which `kbench site build` copies into a site, and what the browser
// tests run (playwright-core, html-validate, axe-core). It lies outside the source tree, like the
// agent CLIs: $KBENCH_SITE_TOOLS, else $KBENCH_CACHE_DIR/site, else ~/.cache/kbench/site.
#pragma once

#include <filesystem>

namespace kb::report {

std::filesystem::path site_tools_dir();

// The files of highlight.js's browser build inside the tools folder (may not exist).
std::filesystem::path highlighter_script(const std::filesystem::path& tools);
std::filesystem::path highlighter_style(const std::filesystem::path& tools);

}  // namespace kb::report
