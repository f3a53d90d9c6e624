#include "report/site_tools.h"

#include <cstdlib>

namespace kb::report {
namespace fs = std::filesystem;

fs::path site_tools_dir() {
  auto env = [](const char* n) -> const char* {
    const char* v = std::getenv(n);
    return v && *v ? v : nullptr;
  };
  if (const char* d = env("KBENCH_SITE_TOOLS")) return d;
  if (const char* d = env("KBENCH_CACHE_DIR")) return fs::path(d) / "site";
  if (const char* d = env("XDG_CACHE_HOME")) return fs::path(d) / "kbench" / "site";
  if (const char* h = env("HOME")) return fs::path(h) / ".cache" / "kbench" / "site";
  return {};
}

fs::path highlighter_script(const fs::path& tools) { return tools / "node_modules/@highlightjs/cdn-assets/highlight.min.js"; }
// A light theme whose colours keep a 4.5:1 contrast on white (a11y-light, by Eric Bailey).
fs::path highlighter_style(const fs::path& tools) { return tools / "node_modules/@highlightjs/cdn-assets/styles/a11y-light.min.css"; }

}  // namespace kb::report
