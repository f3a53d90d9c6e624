// The property-based fuzz driver: for each target (fuzz_targets.h), runs every input of its seed
// corpus (tests/fuzz/corpus/<target>/), then mutates them (byte flips, insertions and deletions,
// the target's dictionary tokens, splices of two inputs, repeated chunks) with a seeded generator
// until its time is up. A broken property, an escaped exception or a crash stops it: the input is
// written to fuzz-finding-<target>.bin in the current folder (from the signal handler too) and the
// exit code is 1. Deterministic for a seed apart from how many inputs fit in the time.
//
//   kbench_fuzz --corpus tests/fuzz/corpus [--seconds 1] [--seed 1] [--target expr] [--max-len 8192]
//
// CI runs it for a second per target (ctest kbench_fuzz, label fuzz). Inputs that found a bug
// belong in the corpus once the bug is fixed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace fs = std::filesystem;
using kb::fuzz::Target;

namespace {

// What the signal handler writes out: the input being run.
const std::string* g_current = nullptr;
char g_finding_path[512];

void on_crash(int sig) {
  if (g_current) {
    const int fd = open(g_finding_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = write(fd, g_current->data(), g_current->size());
      (void)ignored;
      close(fd);
    }
    static const char msg[] = "kbench_fuzz: crash; the input is in ";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    ignored = write(STDERR_FILENO, g_finding_path, strlen(g_finding_path));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>& dict, size_t max_len) : rng_(seed), dict_(dict), max_len_(max_len) {}

  std::string mutate(std::string s, const std::vector<std::string>& corpus) {
    const int rounds = 1 + static_cast<int>(below(4));
    for (int i = 0; i < rounds; ++i) step(s, corpus);
    if (s.size() > max_len_) s.resize(max_len_);
    return s;
  }

 private:
  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void step(std::string& s, const std::vector<std::string>& corpus) {
    const size_t at = below(s.size() + 1);
    switch (below(8)) {
      case 0:  // flip a bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // an interesting byte
        if (!s.empty()) s[below(s.size())] = "\0\xff\x7f\x80\n\"'\\=[]{}-0"[below(15)];
        break;
      case 2:  // insert random bytes
        for (size_t n = 1 + below(8); n > 0; --n) s.insert(s.begin() + static_cast<long>(at), static_cast<char>(below(256)));
        break;
      case 3:  // delete a range
        if (!s.empty()) s.erase(at == s.size() ? at - 1 : at, 1 + below(16));
        break;
      case 4:  // repeat a chunk
        if (!s.empty()) {
          const size_t from = below(s.size()), len = 1 + below(std::min<size_t>(64, s.size() - from));
          const std::string chunk = s.substr(from, len);
          for (size_t n = 1 + below(8); n > 0 && s.size() < max_len_; --n) s.insert(at, chunk);
        }
        break;
      case 5:
      case 6:  // a dictionary token
        if (!dict_.empty()) s.insert(at, dict_[below(dict_.size())]);
        break;
      case 7:  // splice with another input
        if (!corpus.empty()) {
          const std::string& o = corpus[below(corpus.size())];
          const size_t from = below(o.size() + 1);
          s = s.substr(0, at) + o.substr(from, below(o.size() - from + 1));
        }
        break;
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& dict_;
  size_t max_len_;
};

// Runs one input; false (and the input written out) on a finding.
bool run_one(const Target& t, const std::string& input) {
  g_current = &input;
  try {
    t.run(input);
    g_current = nullptr;
    return true;
  } catch (const std::exception& e) {
    std::cerr << "kbench_fuzz: " << t.name << ": " << e.what() << "\n";
  }
  std::ofstream(g_finding_path, std::ios::binary) << input;
  std::cerr << "kbench_fuzz: the input is in " << g_finding_path << "\n";
  g_current = nullptr;
  return false;
}

int usage(const std::string& why) {
  std::cerr << "kbench_fuzz: " << why
            << "\nusage: kbench_fuzz --corpus DIR [--seconds S per target] [--seed N] [--target NAME] [--max-len BYTES]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path corpus_root;
  double seconds = 1;
  uint64_t seed = 1;
  size_t max_len = 8192;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--corpus") corpus_root = v;
    else if (a == "--seconds") seconds = std::atof(v.c_str());
    else if (a == "--seed") seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--max-len") max_len = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--target") only = v;
    else return usage("unknown option " + a);
  }
  if (corpus_root.empty() || !fs::is_directory(corpus_root)) return usage("--corpus DIR is required and must be a folder");
  if (!(seconds > 0) || max_len == 0) return usage("--seconds and --max-len must be positive");
  const fs::path scratch = fs::temp_directory_path() / ("kbench-fuzz-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  kb::fuzz::set_scratch_dir(scratch);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, on_crash);
  signal(SIGPIPE, SIG_IGN);  // the channel target's writer may outlive a reader that gave up
  int status = 0;
  bool matched = false;
  for (const Target& t : kb::fuzz::targets()) {
    if (!only.empty() && only != t.name) continue;
    matched = true;
    std::snprintf(g_finding_path, sizeof g_finding_path, "fuzz-finding-%s.bin", t.name);
    std::vector<std::string> corpus;
    const fs::path dir = corpus_root / t.name;
    if (fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) corpus.push_back(read_file(e.path()));
    if (corpus.empty()) {
      std::cerr << "kbench_fuzz: no seed inputs in " << dir << "\n";
      status = 1;
      continue;
    }
    std::sort(corpus.begin(), corpus.end());  // directory order varies; the run should not
    size_t runs = 0;
    bool ok = true;
    for (const auto& in : corpus) ok = ok && run_one(t, in), ++runs;
    Mutator m(seed ^ std::hash<std::string>()(t.name), t.dictionary, max_len);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (size_t i = 0; ok && std::chrono::steady_clock::now() < end; ++i, ++runs)
      ok = run_one(t, m.mutate(corpus[i % corpus.size()], corpus));
    std::cout << t.name << ": " << runs << " inputs (" << corpus.size() << " seeds), " << (ok ? "no finding" : "FINDING")
              << "\n";
    if (!ok) status = 1;
  }
  fs::remove_all(scratch);
  if (!matched) return usage("no target named " + only);
  return status;
}
