#include "eval/baseline_cache.h"
#include "eval/baseline_stage.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/atomic_file.h"
#include "core/hash.h"
#include "core/json_text.h"
#include "eval/problem_material.h"
#include "target/ceilings.h"
#include "target/python_solution.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// What of the baseline's options can change its record (the expected times are derived from this
// very cache, the progress callback and the folders are not part of what is measured).
json options_material(const EvalOptions& o) {
  return {{"check", o.check},
          {"bench", o.bench},
          {"shapes", o.shapes},
          {"seeds", o.seeds},
          {"secret", o.secret},
          {"timing", to_json(o.timing)},
          {"call_timeout_ms", o.call_timeout.count()},
          {"log_limit_bytes", o.log_limit_bytes},
          {"memory_limit_bytes", o.memory_limit_bytes ? json(*o.memory_limit_bytes) : json(nullptr)},
          {"all_shapes", o.all_shapes},
          {"integrity", o.integrity},
          {"sandbox", o.sandbox},
          {"write_xor_execute", o.write_xor_execute},
          {"isolate", o.isolate},
          {"repeat_calls", o.repeat_calls}};
}

}  // namespace

std::string baseline_cache_key(const Problem& problem, const std::string& target, const std::string& device_fingerprint,
                               const std::string& kbench_version, const EvalOptions& baseline_options) {
  // Each part on its own line after its name, the problem's files last: no two different inputs
  // make the same material.
  std::string material = fmt::format("kbench baseline cache format {}\nkbench {}\nproblem {}\ntarget {}\ndevice {}\noptions {}\n",
                                     kBaselineCacheFormat, kbench_version, problem.name, target, device_fingerprint,
                                     options_material(baseline_options).dump());
  material += problem_material(problem.dir);
  // A Python baseline's time is torch's: another interpreter or torch is another baseline.
  if (is_python_baseline(baseline_source(problem, target)))
    material += "\npython\n" + interpreter_identity(probe_python(configured_python()));
  // The deck's kit, which a baseline may include too (eval/baseline_stage.h); the problem's own kit is
  // in its folder, above.
  for (const auto& kit : baseline_kits(problem))
    if (kit != problem.dir / "kit") material += "\ndeck kit\n" + problem_material(kit);
  // 128 bits from two keyed 64-bit hashes: a collision between two keys is out of reach.
  return fmt::format("{:016x}{:016x}", buffer_hash(material.data(), material.size(), 0x626173656c696e65ull),
                     buffer_hash(material.data(), material.size(), 0x6b62656e63686263ull));
}

fs::path baseline_cache_file(const std::string& key) { return kbench_cache_dir() / "baselines" / (key + ".json"); }

std::optional<EvalResult> read_cached_baseline(const fs::path& file, const std::string& key) {
  try {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("format", 0) != kBaselineCacheFormat || j.value("key", "") != key ||
        !j.contains("baseline"))
      return std::nullopt;
    EvalResult r = eval_result_from_json(j.at("baseline"));
    if (r.verdict() != Verdict::pass) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    // A file that parses as JSON but not as a record (truncated by hand, another format): a miss.
    return std::nullopt;
  }
}

bool write_cached_baseline(const fs::path& file, const std::string& key, const EvalResult& baseline) {
  if (baseline.verdict() != Verdict::pass) return false;
  try {
    fs::create_directories(file.parent_path());
    const json j = {{"format", kBaselineCacheFormat}, {"key", key}, {"baseline", to_json(baseline, /*with_samples=*/true)}};
    write_file_atomically(file, json_text(j) + "\n");
    return true;
  } catch (const std::exception&) {
    return false;  // an unwritable cache: the baseline was still evaluated, just not kept
  }
}

}  // namespace kb
