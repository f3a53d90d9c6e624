#include "eval/expected_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string_view>

#include "core/atomic_file.h"
#include "core/hash.h"
#include "eval/problem_material.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'K', 'B', 'E', 'X', 'P', 'C', 'T', '1'};
constexpr uint64_t kChecksumKey = 0x6578706563746564ull;  // "expected"

// The file: magic, u32 key length, key, u32 outputs, u64 numel per output, u64 checksum of the
// values' bytes, then every output's doubles in order (host byte order: the cache is this machine's).
std::string encode(const std::string& key, const std::vector<std::vector<double>>& values) {
  std::string values_bytes;
  for (const auto& v : values) values_bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  std::string out(kMagic, sizeof kMagic);
  auto put = [&](const auto& x) { out.append(reinterpret_cast<const char*>(&x), sizeof x); };
  put(static_cast<uint32_t>(key.size()));
  out += key;
  put(static_cast<uint32_t>(values.size()));
  for (const auto& v : values) put(static_cast<uint64_t>(v.size()));
  put(buffer_hash(values_bytes.data(), values_bytes.size(), kChecksumKey));
  out += values_bytes;
  return out;
}

// Removes the oldest files of `folder` until it holds at most half of kExpectedCacheBytes, when it
// holds more than kExpectedCacheBytes.
void prune(const fs::path& folder) {
  std::vector<std::pair<fs::file_time_type, fs::directory_entry>> files;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(folder)) {
    std::error_code ec;
    if (!e.is_regular_file(ec)) continue;
    total += e.file_size(ec);
    files.emplace_back(e.last_write_time(ec), e);
  }
  if (total <= kExpectedCacheBytes) return;
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [when, e] : files) {
    if (total <= kExpectedCacheBytes / 2) break;
    std::error_code ec;
    const uint64_t size = e.file_size(ec);
    if (fs::remove(e.path(), ec)) total -= size;
  }
}

}  // namespace

std::string running_binary_identity() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0) return "unknown";
  return fmt::format("{}:{}:{}:{}", static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

ExpectedCache::ExpectedCache(fs::path folder, const Problem& problem, const std::string& target,
                             const std::string& device_fingerprint, const std::string& kbench_version,
                             const std::string& binary_identity)
    : folder_(std::move(folder)), shapes_(problem.shapes) {
  if (folder_.empty()) return;
  // Each part on its own line after its name, the problem's files last: no two different inputs
  // make the same material.
  shared_material_ = fmt::format("kbench expected cache format {}\nkbench {}\nbinary {}\nproblem {}\ntarget {}\ndevice {}\n",
                                 kExpectedCacheFormat, kbench_version, binary_identity, problem.name, target,
                                 device_fingerprint);
  shared_material_ += problem_material(problem.dir);
}

std::string ExpectedCache::key(size_t shape_index, uint64_t seed) const {
  const ShapeCase& shape = shapes_.at(shape_index);
  std::string material = shared_material_;
  material += fmt::format("\nshape {} {}\ndims", shape_index, shape.label);
  for (int64_t d : shape.dims) material += fmt::format(" {}", d);
  material += fmt::format("\nseed {}\n", seed);
  // 128 bits from two keyed 64-bit hashes: a collision between two keys is out of reach.
  return fmt::format("{:016x}{:016x}", buffer_hash(material.data(), material.size(), 0x6578705f6361636bull),
                     buffer_hash(material.data(), material.size(), 0x6b62656e63686578ull));
}

std::optional<std::vector<std::vector<double>>> ExpectedCache::load(const std::string& key,
                                                                     const std::vector<size_t>& numels) const {
  if (folder_.empty()) return std::nullopt;
  try {
    std::ifstream in(folder_ / (key + ".bin"), std::ios::binary);
    if (!in) return std::nullopt;
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    size_t at = 0;
    auto take = [&](void* into, size_t n) {
      if (bytes.size() - at < n) return false;
      std::memcpy(into, bytes.data() + at, n);
      at += n;
      return true;
    };
    char magic[sizeof kMagic];
    uint32_t key_size = 0, outputs = 0;
    if (!take(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0 || !take(&key_size, sizeof key_size) ||
        key_size != key.size() || bytes.compare(at, key_size, key) != 0)
      return std::nullopt;
    at += key_size;
    if (!take(&outputs, sizeof outputs) || outputs != numels.size()) return std::nullopt;
    for (size_t n : numels) {
      uint64_t stored = 0;
      if (!take(&stored, sizeof stored) || stored != n) return std::nullopt;
    }
    uint64_t checksum = 0;
    if (!take(&checksum, sizeof checksum)) return std::nullopt;
    const std::string_view values_bytes(bytes.data() + at, bytes.size() - at);
    size_t total = 0;
    for (size_t n : numels) total += n * sizeof(double);
    if (values_bytes.size() != total || buffer_hash(values_bytes.data(), values_bytes.size(), kChecksumKey) != checksum)
      return std::nullopt;
    std::vector<std::vector<double>> values;
    for (size_t n : numels) {
      values.emplace_back(n);
      take(values.back().data(), n * sizeof(double));
    }
    return values;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool ExpectedCache::store(const std::string& key, const std::vector<std::vector<double>>& values) const {
  if (folder_.empty()) return false;
  uint64_t bytes = 0;
  for (const auto& v : values) bytes += v.size() * sizeof(double);
  if (bytes > kExpectedCacheMaxCaseBytes) return false;
  try {
    fs::create_directories(folder_);
    write_file_atomically(folder_ / (key + ".bin"), encode(key, values));
    prune(folder_);
    return true;
  } catch (const std::exception&) {
    return false;  // an unwritable cache: the case was still computed, just not kept
  }
}

}  // namespace kb
