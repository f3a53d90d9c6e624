// The cache of measured ceilings, shared by the host target (host_ceilings.cpp) and the cuda target
// (cuda_target.cpp): JSON files under kbench_cache_dir(), written atomically, read defensively.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "core/json_text.h"
#include "target/ceilings.h"

namespace kb {
namespace {

constexpr int kCacheFormat = 1;

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::optional<Ceilings> read_ceilings_cache(const std::filesystem::path& file, const std::string& key) {
  std::ifstream f(file);
  if (!f) return std::nullopt;
  // A corrupt, truncated or foreign file is a cache miss, never an error: the caller re-measures.
  nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("format", 0) != kCacheFormat || j.value("machine_key", "") != key) return std::nullopt;
  try {
    Ceilings c = ceilings_from_json(j.at("ceilings"));
    if (!c.measured) return std::nullopt;
    return c;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Atomic replace: write a temporary file in the same directory, flush it to disk, rename it over the
// cache. Readers (other kbench processes) see the old file or the new one, never half of one.
bool write_ceilings_cache(const std::filesystem::path& file, const std::string& key, const Ceilings& c) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  nlohmann::json j = {{"format", kCacheFormat}, {"machine_key", key}, {"measured_at", utc_now()}, {"ceilings", to_json(c)}};
  const std::string text = kb::json_text(j) + "\n";
  std::random_device rd;
  const std::filesystem::path tmp =
      file.parent_path() / fmt::format(".{}.tmp.{}.{:x}", file.filename().string(), getpid(), rd());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;  // unwritable cache dir: the measurement is still returned, just not kept
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = fsync(fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (ok) std::filesystem::rename(tmp, file, ec);
  if (!ok || ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

std::filesystem::path device_ceilings_cache_file(const std::string& device_id) {
  std::string name = device_id;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '_') ch = '-';
  if (name.empty() || name[0] == '.') name = "device" + name;
  return kbench_cache_dir() / "ceilings" / (name + ".json");
}

std::optional<Ceilings> cached_measurement(const std::filesystem::path& file, const std::string& key, bool refresh,
                                           bool measure, const std::function<Ceilings()>& measure_fn,
                                           const std::function<Ceiling()>& measure_floor) {
  std::optional<Ceilings> m = refresh ? std::nullopt : read_ceilings_cache(file, key);
  const bool cached = m.has_value();
  const bool add_floor = measure && measure_floor && !(m && m->launch_floor);
  if (cached && !add_floor) return m;
  if (!cached) {
    if (!measure) return std::nullopt;
    m = measure_fn();
    m->measured = true;
  }
  if (add_floor) {
    try {
      m->launch_floor = measure_floor();
    } catch (const std::exception& e) {
      m->unmeasured["launch_floor"] = std::string("failed: ") + e.what();
    }
  }
  if (!measurement_failed_somewhere(*m)) write_ceilings_cache(file, key, *m);
  return m;
}

}  // namespace kb
