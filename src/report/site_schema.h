// The versioned names of the site's data files (docs/site.md). A field's meaning never changes
// under one name; fields may be added.
#pragma once

namespace kb::report {

inline constexpr const char* kSiteSchema = "kbench.site/1";               // data/leaderboard.json
inline constexpr const char* kSiteRunSchema = "kbench.site.run/1";        // runs/<run>/data.json and run.js
inline constexpr const char* kSiteManifestSchema = "kbench.site.manifest/1";  // manifest.json

}  // namespace kb::report
