// Staging a problem's baseline (problems/<id>/baseline.cu or baseline.cpp, kbench's own reference line)
// as a solution folder, so that it is built and judged by exactly the path a solution takes.
//
// Where a library's fast path is reached only from Python -- torch's fused attention, whose fp32
// kernel (the memory-efficient one) has no C API, while cuDNN's fused attention takes only fp16 and
// bf16 -- the baseline is baseline.py, PyTorch, staged as solution.py and judged as a Python
// solution (docs/python-solutions.md) on every target the problem supports that has no native one.
//
// Baselines of several problems share code the way the deck's solutions do, through the kits
// (target/solution_kit.h: the problem's kit/ and the deck's problems/kit/): the four fp32 GEMM
// problems' cuBLAS baseline is one header of the deck's kit. A staged baseline is not under
// problems/<id>/solutions/, so no kit is on its include path; instead the kits' files are copied
// beside it (the problem's first, so that its headers win a name both kits use), where the
// baseline's `#include "v3/cublas_sgemm_baseline.cuh"` finds them as a solution finds them through -I.
// They are then part of the staged folder, and so of its build cache key.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "deck/problem.h"

namespace kb {

inline constexpr const char* kPythonBaselineFile = "baseline.py";

// The problem's baseline source for a target: baseline.cu (cuda) or baseline.cpp (host) when the
// folder holds it, else baseline.py when the folder holds that, else the native name (whether or not
// the problem has one).
std::filesystem::path baseline_source(const Problem& p, const std::string& target);

// Whether a baseline source is the Python one (baseline.py).
bool is_python_baseline(const std::filesystem::path& source);

// The kits a baseline of `p` may include, most specific first, each only if it exists: the problem's
// <problem>/kit and the deck's kit beside the problem folders (never a folder named kit that holds a
// problem.toml).
std::vector<std::filesystem::path> baseline_kits(const Problem& p);

// The baseline staged in `work_dir`/baseline-source (emptied first): its source as solution.cu (or
// .cpp) and the files of baseline_kits(p) under their paths relative to their kit; baseline.py as
// solution.py with the kits' .py files only. nullopt when the problem has no baseline for the target.
std::optional<std::filesystem::path> stage_baseline(const Problem& p, const std::string& target,
                                                    const std::filesystem::path& work_dir);

}  // namespace kb
