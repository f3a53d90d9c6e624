// A problem's kit: headers shared by the deck's own solutions of that problem, kept in one place
// instead of a copy in every solution folder (problems/<id>/kit/), and the deck's kit for code
// shared by solutions of several problems (problems/kit/, today the exploits' device-side result
// cache).
//
// A kit belongs to the deck, not to the solution ABI: it holds honest kernels (answers) and
// exploit machinery (test fixtures), so it is offered to no agent. It is on the include path of a
// build only when the solution folder is one of the deck's own, problems/<id>/solutions/<name>/
// (decided from where the folder is, never from anything a solution writes); an agent's workspace
// and the copy of its solution that the official evaluation builds get none, and `kbench prepare`
// copies no kit. Where a kit is used it is bound read-only into the build sandbox, added with -I,
// allowed by the build's input check and hashed into the build cache key (target/compile.h).
#pragma once

#include <filesystem>
#include <vector>

namespace kb {

// The kit folders for a build of `solution_dir`, canonical, most specific first: the problem's
// <problem>/kit and the deck's <deck>/kit, each only if it exists. Empty for a folder that is not
// a deck solution (its parent is not named `solutions`, or the folder above holds no problem.toml).
std::vector<std::filesystem::path> solution_kits(const std::filesystem::path& solution_dir);

}  // namespace kb
