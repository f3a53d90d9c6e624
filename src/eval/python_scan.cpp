#include "eval/python_scan.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>

#include "core/bwrap.h"
#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;

// Defined in the file CMake generates from src/eval/python_scan.py (cmake/EmbedText.cmake).
extern const char kPythonScanScript[];

const char* python_scan_script() { return kPythonScanScript; }

namespace {

// The scanner's exit status when a file does not parse (python_scan.py's refuse()).
constexpr int kRefusedExit = 3;

std::string trimmed_output(const std::string& out) {
  std::string s = out.substr(0, 600);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (out.size() > 600) s += " [...]";
  return s.empty() ? "(no output)" : s;
}

// The interpreter as an absolute file with its links resolved: a virtualenv's python3 is a link to
// the system's, and the sandbox shows the system's folders, not the virtualenv's.
fs::path interpreter(const PythonScanOptions& o) {
  const fs::path found = o.python.empty() ? find_program("python3") : o.python;
  if (found.empty())
    throw PythonScanRefused("no python3 on PATH: kbench parses Python solutions with python3's own ast module and "
                            "judges none without it (install python3)",
                            false);
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  if (ec || !fs::is_regular_file(real))
    throw PythonScanRefused(fmt::format("the Python interpreter {} does not exist: kbench parses Python solutions "
                                        "with python3's own ast module and judges none without it",
                                        found.string()),
                            false);
  return real;
}

// The sandbox of the build (no network, nothing of the machine but the system folders), showing the
// solution folder read-only, and the interpreter's prefix when it lies outside the system folders.
CommandResult run_sandboxed(const std::vector<std::string>& argv, const fs::path& python, const fs::path& dir,
                            std::chrono::milliseconds timeout) {
  std::vector<fs::path> read_only;
  if (!in_sandbox_system_folders(python)) read_only.push_back(python.parent_path().parent_path());
  read_only.push_back(dir);
  return run_tool_sandboxed(argv, read_only, timeout);
}

// The scanner's JSON object: the last line of its output that is one (python3 writes nothing else
// with -W ignore, but a crash's traceback would come first).
nlohmann::json scanner_answer(const std::string& output) {
  std::istringstream in(output);
  std::string last;
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] == '{') last = l;
  if (last.empty()) return nullptr;
  return nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

bool has_python_sources(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".py") return true;
  return false;
}

std::vector<ScanHit> python_scan(const fs::path& dir, const PythonScanOptions& o) {
  std::error_code ec;
  const fs::path folder = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(folder))
    throw PythonScanRefused(fmt::format("the solution folder {} cannot be read", dir.string()), false);
  const fs::path python = interpreter(o);
  // -I: no environment variables, no user site, no current folder on sys.path; -B: no .pyc
  // written; -S: no site module (no .pth file of the machine runs); -W ignore: warnings (odd
  // escapes in the solution's strings) would mix into the JSON on the shared output.
  std::vector<std::string> argv = {python.string(), "-I", "-B", "-S", "-W", "ignore", "-c", python_scan_script(),
                                   folder.string()};
  for (const auto& m : o.kit_modules) argv.push_back("--module=" + m);
  argv.insert(argv.end(), o.forbidden_torch.begin(), o.forbidden_torch.end());
  const CommandResult r = o.sandbox ? run_sandboxed(argv, python, folder, o.timeout) : run_command(argv, o.timeout);
  const std::string who = fmt::format("the Python scan ({} -I -B -S, python_scan.py)", python.string());
  if (r.timed_out)
    throw PythonScanRefused(fmt::format("{} ran past {} s and was stopped; kbench judges no solution it has not "
                                        "scanned",
                                        who, std::chrono::duration_cast<std::chrono::seconds>(o.timeout).count()),
                            false);
  const nlohmann::json answer = scanner_answer(r.output);
  if (r.exit_code == kRefusedExit && answer.is_object() && answer.contains("refusal") && answer["refusal"].is_string())
    throw PythonScanRefused("the solution's Python sources cannot be scanned: " +
                                answer["refusal"].get<std::string>(),
                            true);
  if (r.exit_code != 0 || !answer.is_object() || !answer.contains("hits") || !answer["hits"].is_array())
    throw PythonScanRefused(fmt::format("{} failed ({}): {}; kbench judges no solution it has not scanned", who,
                                        r.signal ? fmt::format("signal {}", r.signal)
                                                 : fmt::format("exit code {}", r.exit_code),
                                        trimmed_output(r.output)),
                            false);
  std::vector<ScanHit> hits;
  try {
    for (const auto& h : answer["hits"])
      hits.push_back({h.at("file").get<std::string>(), h.at("line").get<int>(),
                      h.at("rule").get<std::string>() + ": " + h.at("detail").get<std::string>(),
                      h.at("excerpt").get<std::string>()});
  } catch (const nlohmann::json::exception& e) {
    throw PythonScanRefused(fmt::format("{} answered a hit kbench cannot read ({})", who, e.what()), false);
  }
  return hits;
}

}  // namespace kb
