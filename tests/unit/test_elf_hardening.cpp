// Full RELRO (docs/threat-model.md, guarantee 7): kbench (which is also the worker) and every
// solution kbench builds resolve all their relocations at load and then make their dynamic
// tables read-only, so a solution in the worker's address space cannot send one of kbench's calls
// (the timer's, the fingerprint's) elsewhere by rewriting a GOT entry. Read from the ELF files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "core/subprocess.h"
#include "elf_relro.h"
#include "target/target.h"

namespace fs = std::filesystem;
using kb::testing_support::read_relro;

TEST(ElfHardening, KbenchAndItsWorkerHaveFullRelro) {
  const auto f = read_relro(KBENCH_BINARY);
  EXPECT_TRUE(f.relro_segment) << KBENCH_BINARY;
  EXPECT_TRUE(f.bind_now) << KBENCH_BINARY << " resolves symbols lazily: its GOT stays writable";
}

TEST(ElfHardening, HostSolutionsAreBuiltWithFullRelro) {
  const fs::path root = fs::temp_directory_path() / ("kbench-elf-hardening-" + std::to_string(getpid()));
  const auto host = kb::make_target("host");
  const kb::BuildResult r = host->build(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/solutions/host-fast", root);
  ASSERT_TRUE(r.ok) << r.command << "\n" << r.log;
  EXPECT_TRUE(read_relro(r.library).full()) << r.command;
  fs::remove_all(root);
}

// The reader tells partial RELRO from full: a library linked without -z now has the segment but
// binds lazily (so the two tests above could fail).
TEST(ElfHardening, TheReaderSeesALazyLibrary) {
  const fs::path root = fs::temp_directory_path() / ("kbench-elf-lazy-" + std::to_string(getpid()));
  fs::create_directories(root);
  const auto r = kb::run_command({"g++", "-std=c++20", "-fopenmp", "-shared", "-fPIC", "-Wl,-z,relro,-z,lazy", "-o", (root / "lazy.so").string(),
                                  (fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/solutions/host-fast/solution.cpp").string(),
                                  "-I" + (fs::path(KBENCH_SOURCE_DIR) / "include").string(),
                                  "-I" + (fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/kit").string()},
                                 std::chrono::minutes(2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto f = read_relro(root / "lazy.so");
  EXPECT_TRUE(f.relro_segment);
  EXPECT_FALSE(f.bind_now);
  EXPECT_FALSE(f.full());
  EXPECT_THROW(read_relro(fs::path(KBENCH_SOURCE_DIR) / "README.md"), std::runtime_error);
  fs::remove_all(root);
}
