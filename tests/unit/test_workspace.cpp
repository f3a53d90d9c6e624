// Agent workspaces: what `kbench prepare` writes, what counts as the solution afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>

#include <chrono>
#include <fstream>

#include "agent/workspace.h"
#include "core/subprocess.h"
#include "core/version.h"

#include "test_support.h"

namespace fs = std::filesystem;
using namespace kb;

namespace {

fs::path temp_dir(const std::string& name) { return testing_support::fresh_temp_dir(name); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

struct Prepared {
  fs::path root;
  Workspace w;
};

// Python solutions are not offered unless `python` says so, whatever this machine has.
Prepared prepare(const std::string& name, const std::string& target = "host", bool python = false) {
  Prepared r;
  r.root = temp_dir(name);
  WorkspaceOptions o;
  o.dir = r.root / "ws";
  o.private_dir = r.root / "private";
  o.target = target;
  o.device = "Test device";
  o.kbench_binary = fs::read_symlink("/proc/self/exe");  // any absolute file will do here
  o.hardware_dir = fs::path(source_dir()) / "hardware";
  o.python = python;
  r.w = prepare_workspace(load_problem(fs::path(source_dir()) / "problems/softmax"), o);
  return r;
}

}  // namespace

TEST(Workspace, HoldsPromptInterfaceStarterHeadersAndWrapper) {
  auto [root, w] = prepare("ws-files");
  for (const char* f : {"prompt.md", "README.md", "solution.cpp", "include/kbench/solution.h", "include/dlpack/dlpack.h", "kbench"})
    EXPECT_TRUE(fs::is_regular_file(w.dir / f)) << f;
  EXPECT_EQ(slurp(w.dir / "prompt.md"), w.prompt);
  struct stat st {};
  ASSERT_EQ(stat((w.dir / "kbench").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  const std::string wrapper = slurp(w.dir / "kbench");
  EXPECT_NE(wrapper.find(fs::read_symlink("/proc/self/exe").string()), std::string::npos) << wrapper;
  EXPECT_NE(wrapper.find("--problems " + (w.private_dir / "problems").string()), std::string::npos) << wrapper;
  EXPECT_NE(wrapper.find("--target host softmax " + w.dir.string()), std::string::npos) << wrapper;
  EXPECT_NE(wrapper.find("check|bench"), std::string::npos) << wrapper;
  fs::remove_all(root);
}

TEST(Workspace, PrivateCopyHoldsOnlyWhatTheWrapperNeeds) {
  auto [root, w] = prepare("ws-private");
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(w.private_dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), w.private_dir).string());
  std::sort(files.begin(), files.end());
  // No reference.cpp, no solutions/, no prompt source, no hardware tables on the host target.
  EXPECT_EQ(files, (std::vector<std::string>{"include/kbench/solution.h", "problems/softmax/problem.toml"}));
  EXPECT_TRUE(fs::is_directory(w.private_dir / "hardware"));
  EXPECT_EQ(fs::status(w.private_dir / "problems/softmax/problem.toml").permissions() & fs::perms::owner_write, fs::perms::none);
  fs::remove_all(root);
}

TEST(Workspace, StarterCompilesAndSaysWhatToImplement) {
  auto [root, w] = prepare("ws-starter");
  const std::string starter = slurp(w.dir / "solution.cpp");
  EXPECT_NE(starter.find("Row-wise softmax"), std::string::npos);
  EXPECT_NE(starter.find("return 1;  // not implemented yet"), std::string::npos);
  auto r = run_command({"g++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I" + (w.dir / "include").string(),
                        (w.dir / "solution.cpp").string()},
                       std::chrono::minutes(1));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  fs::remove_all(root);
}

// Where Python solutions are offered: starter.py (valid Python, naming the tensors and the
// forbidden torch operations, failing until implemented), the README's and the prompt's Python
// sections; where not, none of them. A solution.py is part of the solution either way.
TEST(Workspace, OffersAPythonStarterOnlyWhereToldPythonRuns) {
  auto [root, w] = prepare("ws-python", "host", true);
  ASSERT_TRUE(w.python);
  const std::string starter = slurp(w.dir / "starter.py");
  for (const char* s : {"def setup(problem):", "def run(state, inputs, outputs):", "def teardown(state):",
                        "inputs[0]          x f32 [batch, vocab]", "outputs[0]         y f32 [batch, vocab]",
                        "log_softmax", "raise NotImplementedError", "delete solution.cpp"})
    EXPECT_NE(starter.find(s), std::string::npos) << s << "\n" << starter;
  auto r = run_command({"python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", (w.dir / "starter.py").string()},
                       std::chrono::minutes(1));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(slurp(w.dir / "README.md").find("## Or in Python (PyTorch on the CPU)"), std::string::npos);
  EXPECT_NE(w.prompt.find("**Or in Python.**"), std::string::npos);
  EXPECT_NE(w.prompt.find("`gumbel_softmax`"), std::string::npos) << "the forbidden torch operations are named";
  fs::rename(w.dir / "starter.py", w.dir / "solution.py");
  std::vector<std::string> names;
  for (const auto& f : solution_files(w.dir, "host")) names.push_back(f.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"solution.cpp", "solution.py"}));
  fs::remove_all(root);

  auto [root2, without] = prepare("ws-no-python", "cuda", false);
  EXPECT_FALSE(without.python);
  EXPECT_FALSE(fs::exists(without.dir / "starter.py"));
  EXPECT_EQ(slurp(without.dir / "README.md").find("Or in Python"), std::string::npos);
  EXPECT_EQ(without.prompt.find("Or in Python"), std::string::npos);
  fs::remove_all(root2);
}

TEST(Workspace, RefusesANonEmptyFolderAndAPrivateFolderInsideIt) {
  const fs::path root = temp_dir("ws-refuse");
  fs::create_directories(root / "ws");
  std::ofstream(root / "ws" / "mine.txt") << "keep";
  WorkspaceOptions o;
  o.dir = root / "ws";
  o.private_dir = root / "private";
  o.target = "host";
  o.kbench_binary = fs::read_symlink("/proc/self/exe");
  const Problem p = load_problem(fs::path(source_dir()) / "problems/softmax");
  try {
    prepare_workspace(p, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
  }
  o.dir = root / "ws2";
  o.private_dir = root / "ws2" / "private";
  EXPECT_THROW(prepare_workspace(p, o), std::invalid_argument);
  EXPECT_TRUE(fs::exists(root / "ws" / "mine.txt"));
  fs::remove_all(root);
}

TEST(Workspace, SolutionIsTopLevelSourcesAndHeadersOnly) {
  auto [root, w] = prepare("ws-solution");
  std::ofstream(w.dir / "kernel.h") << "// helper";
  std::ofstream(w.dir / "solution.toml") << "";
  std::ofstream(w.dir / "notes.md") << "scratch";
  std::ofstream(w.dir / "kernel.cu") << "// not a host source";
  fs::create_directories(w.dir / "experiments");
  std::ofstream(w.dir / "experiments" / "try.cpp") << "// scratch";
  fs::create_symlink("/etc/hostname", w.dir / "stolen.h");
  std::vector<std::string> names;
  for (const auto& f : solution_files(w.dir, "host")) names.push_back(f.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"kernel.h", "solution.cpp", "solution.toml"}));
  std::vector<std::string> cuda_names;
  for (const auto& f : solution_files(w.dir, "cuda")) cuda_names.push_back(f.filename().string());
  EXPECT_EQ(cuda_names, (std::vector<std::string>{"kernel.cu", "kernel.h", "solution.cpp", "solution.toml"}));

  const auto notes = copy_solution(w.dir, "host", root / "copy");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("stolen.h is a symlink"), std::string::npos) << notes[0];
  EXPECT_TRUE(fs::is_regular_file(root / "copy" / "solution.cpp"));
  EXPECT_FALSE(fs::exists(root / "copy" / "stolen.h"));
  EXPECT_FALSE(fs::exists(root / "copy" / "experiments"));
  EXPECT_THROW(copy_solution(w.dir, "host", root / "copy"), std::invalid_argument);
  fs::remove_all(root);
}

// A sparse file costs the agent a few MB and kbench its whole apparent size: never read, never
// copied; nor a file over the size limit. The rest of the solution is copied.
TEST(Workspace, CopySolutionRefusesSparseAndOversizedFiles) {
  const fs::path root = fs::temp_directory_path() / ("kb-ws-limits-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "ws");
  std::ofstream(root / "ws" / "solution.cpp") << "int x;";
  {
    std::ofstream f(root / "ws" / "sparse.h");
  }
  fs::resize_file(root / "ws" / "sparse.h", 2ull << 30);  // truncate -s 2G: 2 GB long, nothing allocated
  std::ofstream(root / "ws" / "big.h") << std::string(5u << 20, 'x');
  kb::SolutionLimits limits;
  const auto t0 = std::chrono::steady_clock::now();
  const auto notes = kb::copy_solution(root / "ws", "host", root / "copy", limits);
  // Not a timing claim: a read of 2 GB would take seconds; this bound only catches that.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  ASSERT_EQ(notes.size(), 2u);
  std::string all = notes[0] + "\n" + notes[1];
  EXPECT_NE(all.find("sparse.h is a sparse file"), std::string::npos) << all;
  EXPECT_NE(all.find("big.h is 5242880 bytes, over the limit of 4194304 bytes"), std::string::npos) << all;
  EXPECT_TRUE(fs::is_regular_file(root / "copy" / "solution.cpp"));
  EXPECT_FALSE(fs::exists(root / "copy" / "sparse.h"));
  EXPECT_FALSE(fs::exists(root / "copy" / "big.h"));
  fs::remove_all(root);
}
