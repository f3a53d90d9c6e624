// Where the CUDA toolkit of an nvcc lives. The folder above nvcc's bin/ is the toolkit only when
// nvcc is the toolkit's own binary; a machine may put a wrapper on PATH instead (a two-line
// /usr/local/bin/nvcc that execs /usr/local/cuda-13.0/bin/nvcc), and then that folder is
// /usr/local, which holds no CUDA header. nvcc itself knows: its dry run prints TOP, the root it
// takes its headers, libraries and passes from.
#pragma once

#include <filesystem>

namespace kb {

// The canonical toolkit root of `nvcc` (/usr/local/cuda-13.0), from `nvcc --dryrun`'s TOP, asked
// once per nvcc path and process; where nvcc cannot say (not runnable, no TOP line), the folder
// above the canonical nvcc's bin/. Empty when neither exists.
std::filesystem::path nvcc_toolkit_root(const std::filesystem::path& nvcc);

}  // namespace kb
