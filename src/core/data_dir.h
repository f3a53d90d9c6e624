// Where kbench finds the data it ships: the problem deck, the datasheets (hardware/), the price
// table (prices/) and the solution header (include/kbench/solution.h). Three layouts:
//   - $KBENCH_DATA_DIR, when set: a folder laid out like share/kbench (or like the source tree);
//   - installed (`cmake --install`, the .deb): <prefix>/bin/kbench finds <prefix>/share/kbench
//     and the header in <prefix>/include, relative to its own binary, so a prefix can be moved
//     (a cluster's shared filesystem) without reconfiguring;
//   - a build tree: the source tree kbench was configured from, as before.
#pragma once

#include <filesystem>

namespace kb {

// The folder holding problems/, hardware/ and prices/.
std::filesystem::path data_dir();

// <prefix>/share/kbench when this binary runs from an installed prefix (<prefix>/bin/kbench next to
// a share/kbench holding problems/), else empty. A sandbox hides it when it lies in the system
// folders every sandbox shows (an install into /usr): it holds the reference solutions.
std::filesystem::path installed_data_dir();

// The folder holding kbench/solution.h for `data`: data/include (the source tree, or a
// $KBENCH_DATA_DIR laid out like it), else the prefix's include/ (data = <prefix>/share/kbench);
// empty when neither has the header.
std::filesystem::path solution_include_dir(const std::filesystem::path& data);

}  // namespace kb
