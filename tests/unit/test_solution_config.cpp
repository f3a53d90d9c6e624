#include <gtest/gtest.h>

#include <fstream>

#include "target/solution_config.h"
#include "test_support.h"

namespace kb {
namespace {

namespace fs = std::filesystem;
using testing_support::ScopedEnv;
using testing_support::TempDir;

class SolutionConfigTest : public testing::Test {
 protected:
  TempDir tmp{"solution-config"};
  fs::path write(const std::string& toml) {
    fs::create_directories(tmp.path() / "inc");
    std::ofstream(tmp.path() / "solution.toml") << toml;
    return tmp.path();
  }
  void expect_rejected(const std::string& toml, const std::string& target, const std::vector<std::string>& allowed,
                       std::initializer_list<std::string_view> fragments) {
    const fs::path dir = write(toml);
    try {
      load_solution_config(dir, target, allowed);
      ADD_FAILURE() << "accepted: " << toml;
    } catch (const SolutionConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("solution.toml"), std::string::npos) << msg;
      for (auto f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
    }
  }
};

TEST_F(SolutionConfigTest, AFolderWithoutSolutionTomlAddsNothing) {
  fs::create_directories(tmp.path());
  const SolutionConfig c = load_solution_config(tmp.path(), "cuda", {});
  EXPECT_TRUE(c.include_dirs.empty());
  EXPECT_TRUE(c.flags.empty());
  EXPECT_TRUE(c.libraries.empty());
}

TEST_F(SolutionConfigTest, CodeGenerationFlagsAndInnerIncludeDirsAreAccepted) {
  const fs::path dir = write("include_dirs = [\"inc\"]\nflags = [\"-DTILE=128\", \"--use_fast_math\", \"-maxrregcount=128\"]\n");
  const SolutionConfig c = load_solution_config(dir, "cuda", {});
  ASSERT_EQ(c.include_dirs.size(), 1u);
  EXPECT_EQ(fs::path(c.include_dirs[0]), fs::weakly_canonical(dir / "inc"));
  EXPECT_EQ(c.flags, (std::vector<std::string>{"-DTILE=128", "--use_fast_math", "-maxrregcount=128"}));
}

TEST_F(SolutionConfigTest, FlagsThatChangeWhatIsBuiltOrLinkedAreRejected) {
  for (const char* flag : {"-Wl,--wrap=clock_gettime", "-L/tmp", "-lcublas", "-I/usr/include", "-o", "-include",
                           "-fplugin=x.so", "-Xlinker", "--compiler-bindir", "-ccbin"})
    expect_rejected(std::string("flags = [\"") + flag + "\"]\n", "cuda", {}, {"flags[0]", flag, "not allowed"});
  EXPECT_FALSE(flag_allowed("host", "--use_fast_math"));  // an nvcc flag, not g++'s
  EXPECT_TRUE(flag_allowed("host", "-ffast-math"));
}

TEST_F(SolutionConfigTest, IncludeDirsOutsideTheFolderAreRejected) {
  expect_rejected("include_dirs = [\"../\"]\n", "host", {}, {"include_dirs[0]", "outside the solution folder"});
  expect_rejected("include_dirs = [\"/usr/include\"]\n", "host", {}, {"include_dirs[0]", "/usr/include"});
}

TEST_F(SolutionConfigTest, LibraryRootsNeedThePoliciesPermissionAndTheVariable) {
  expect_rejected("include_dirs = [\"${KBENCH_CUTLASS_DIR}/include\"]\n", "cuda", {},
                  {"include_dirs[0]", "does not allow the cutlass library"});
  {
    ScopedEnv unset("KBENCH_CUTLASS_DIR", nullptr);
    expect_rejected("include_dirs = [\"${KBENCH_CUTLASS_DIR}/include\"]\n", "cuda", {"cutlass"},
                    {"KBENCH_CUTLASS_DIR", "not set"});
  }
  ScopedEnv set("KBENCH_CUTLASS_DIR", "/opt/cutlass");
  const SolutionConfig c = load_solution_config(write("include_dirs = [\"${KBENCH_CUTLASS_DIR}/include\"]\n"), "cuda", {"cutlass"});
  EXPECT_EQ(c.include_dirs, (std::vector<std::string>{"/opt/cutlass/include"}));
}

TEST_F(SolutionConfigTest, LibrariesMustBeAllowedByTheProblem) {
  expect_rejected("libraries = [\"cublas\"]\n", "cuda", {}, {"libraries[0]", "cublas", "allowed: none"});
  EXPECT_EQ(load_solution_config(write("libraries = [\"cublasLt\"]\n"), "cuda", {"cublasLt"}).libraries,
            (std::vector<std::string>{"cublasLt"}));
}

TEST_F(SolutionConfigTest, UnknownKeysAndSyntaxErrorsNameTheFile) {
  expect_rejected("flag = [\"-O2\"]\n", "host", {}, {"flag", "unknown key"});
  expect_rejected("flags = [\"-O2\"\n", "host", {}, {"TOML syntax error"});
  expect_rejected("flags = \"-O2\"\n", "host", {}, {"flags", "array of strings"});
}

}  // namespace
}  // namespace kb
