// The site's own browser files (src/report/assets: the page script and style sheet), compiled
// into kbench by cmake/EmbedAssets.cmake. Third-party files (the syntax highlighter) are not
// among them: `kbench site build` copies those from the site tools folder (site_tools.h).
#pragma once

#include <string_view>
#include <vector>

namespace kb::report {

struct SiteAsset {
  std::string_view name;   // file name, e.g. "site.js"
  std::string_view bytes;
};

const std::vector<SiteAsset>& site_assets();

}  // namespace kb::report
