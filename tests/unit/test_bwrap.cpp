// The sandbox layouts (core/bwrap.h, eval/worker_sandbox.h, target/build_sandbox.h): what they
// carry in (kbench's own libraries when they live outside the system folders), what environment
// passes, which build inputs are allowed, and a build cache that notices a changed input outside
// the solution folder.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "agent/sandbox.h"
#include "core/bwrap.h"
#include "core/subprocess.h"
#include "eval/worker_sandbox.h"
#include "target/build_sandbox.h"
#include "target/compile.h"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kb-bwrap-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

// A machine whose libraries are unpacked under a private prefix (found through LD_LIBRARY_PATH):
// a library this process loaded from there is bound into the agent's sandbox at the path the
// loader found it by, and its folder is on the worker's LD_LIBRARY_PATH.
TEST(Bwrap, LibrariesOutsideTheSystemFoldersAreCarriedIntoSandboxes) {
  const fs::path root = scratch("libs");
  fs::path libz;
  for (const char* c : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1",
                        "/usr/lib/aarch64-linux-gnu/libz.so.1"})
    if (fs::exists(c)) libz = c;
  if (libz.empty()) GTEST_SKIP() << "no libz.so.1 to copy";
  fs::create_directories(root / "deps/lib");
  const fs::path copy = root / "deps/lib/libkbtestz.so.1";
  fs::copy_file(fs::canonical(libz), copy);
  void* h = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();

  const auto libs = kb::runtime_libraries();
  EXPECT_TRUE(std::any_of(libs.begin(), libs.end(), [&](const kb::RuntimeLibrary& l) { return l.loaded_as == copy; }));
  EXPECT_NE(kb::runtime_library_path().find((root / "deps/lib").string()), std::string::npos);
  bool on_path = false;
  for (const auto& [k, v] : kb::worker_environment())
    if (k == "LD_LIBRARY_PATH" && v.find((root / "deps/lib").string()) != std::string::npos) on_path = true;
  EXPECT_TRUE(on_path);

  const kb::SandboxProbe probe = kb::probe_sandbox();
  if (probe.ok) {
    const kb::CommandResult r = kb::run_command(
        kb::sandbox_command(kb::SandboxSpec{}, {"/bin/sh", "-c", "test -r " + copy.string() + " && echo SEEN"}),
        std::chrono::seconds(60));
    EXPECT_NE(r.output.find("SEEN"), std::string::npos) << r.output;
  }
  dlclose(h);
  fs::remove_all(root);
}

// The worker's environment: what picks devices and threads passes, keys and HOME do not.
TEST(Bwrap, WorkerEnvironmentHasNoKeysAndNoHome) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-test-only", 1);
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  setenv("OMP_NUM_THREADS", "2", 1);
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : kb::worker_environment()) env[k] = v;
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "3");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
  EXPECT_EQ(env.count("ANTHROPIC_API_KEY"), 0u);
  EXPECT_EQ(env.count("HOME"), 0u);
  unsetenv("ANTHROPIC_API_KEY");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("OMP_NUM_THREADS");
}

// The compiler's dependency list, read back and judged: the solution folder, the include folders
// of the command line, the system headers and nvcc's temporaries pass; anything else does not.
TEST(BuildSandbox, DependencyListIsParsedAndJudged) {
  const fs::path root = scratch("deps");
  fs::create_directories(root / "sol");
  fs::create_directories(root / "inc");
  std::ofstream(root / "sol" / "solution.cpp") << "";
  std::ofstream(root / "deps.txt") << "kbench-build: " << (root / "sol/solution.cpp").string()
                                   << " /usr/include/stdio.h \\\n /etc/passwd rel.h\nkbench-build: /tmp/tmpxft_0001_s.cu\n";
  const auto deps = kb::read_dependency_file(root / "deps.txt", root / "sol");
  const std::vector<fs::path> want = {"/etc/passwd", "/tmp/tmpxft_0001_s.cu", fs::weakly_canonical("/usr/include/stdio.h"),
                                      fs::canonical(root) / "sol/rel.h", fs::canonical(root) / "sol/solution.cpp"};
  std::vector<fs::path> sorted_want = want;
  std::sort(sorted_want.begin(), sorted_want.end());
  EXPECT_EQ(deps, sorted_want);
  const kb::BuildRoots roots = kb::build_roots({"g++", "-I" + (root / "inc").string(), "x.cpp"}, root / "sol");
  EXPECT_TRUE(roots.allows(fs::canonical(root) / "sol/solution.cpp"));
  EXPECT_TRUE(roots.allows(fs::canonical(root) / "inc/x.h"));
  EXPECT_TRUE(roots.allows("/usr/include/stdio.h"));
  EXPECT_TRUE(roots.allows("/tmp/tmpxft_0001_s.cu"));
  EXPECT_FALSE(roots.allows("/tmp/other/tmpxft_0001_s.cu"));  // only nvcc's own temporary folder
  EXPECT_FALSE(roots.allows("/tmp/notnvcc.h"));
  kb::BuildRoots unsandboxed = roots;
  unsandboxed.temp_dir = "/var/build/work/tmp";
  EXPECT_TRUE(unsandboxed.allows("/var/build/work/tmp/tmpxft_0001_s.cu"));
  EXPECT_FALSE(unsandboxed.allows("/tmp/tmpxft_0001_s.cu"));
  EXPECT_FALSE(roots.allows("/etc/passwd"));
  EXPECT_FALSE(roots.allows("/usr/share/common-licenses/GPL-3"));
  EXPECT_FALSE(roots.allows(fs::canonical(root) / "deps.txt"));
  EXPECT_FALSE(roots.allows(fs::canonical(root) / "sol-other/x.h"));
  fs::remove_all(root);
}

// A header outside the solution folder (an allowed include folder) changes: the cached library is
// not served, the build runs again (a stale library once gave a false PASS).
TEST(BuildSandbox, CacheKeyCoversInputsOutsideTheSolutionFolder) {
  const fs::path root = scratch("cache");
  fs::create_directories(root / "sol");
  fs::create_directories(root / "inc");
  std::ofstream(root / "inc" / "value.h") << "#define VALUE 1\n";
  std::ofstream(root / "sol" / "solution.cpp") << "#include \"value.h\"\nextern \"C\" int value() { return VALUE; }\n";
  const bool sandbox = kb::probe_worker_sandbox().ok;
  const std::vector<std::string> argv = {"g++", "-shared", "-fPIC", "-I" + (root / "inc").string(),
                                         (root / "sol" / "solution.cpp").string()};
  const kb::BuildResult first = kb::compile_cached(argv, root / "sol", root / "build", sandbox);
  ASSERT_TRUE(first.ok) << first.log;
  const kb::BuildResult hit = kb::compile_cached(argv, root / "sol", root / "build", sandbox);
  EXPECT_TRUE(hit.cached);
  std::ofstream(root / "inc" / "value.h") << "#define VALUE 2\n";
  const kb::BuildResult again = kb::compile_cached(argv, root / "sol", root / "build", sandbox);
  ASSERT_TRUE(again.ok) << again.log;
  EXPECT_FALSE(again.cached);
  void* h = dlopen(again.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto value = reinterpret_cast<int (*)()>(dlsym(h, "value"));
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value(), 2);
  dlclose(h);
  fs::remove_all(root);
}
