// The cache of expected outputs of the public check seeds (issue 18: an agent runs `./kbench check`
// dozens of times on the same problem, and each time the parent recomputed the same cases: the
// fp64 CPU oracle and the GPU reference, 2-8 s of a deck problem's warm eval on an H200).
//
// Only what is the same on every run is cached: a case of a public seed (problem.toml's check seeds
// or --seed), unperturbed, of a problem without weights (weights are drawn from a fresh secret seed
// each run). Secret seeds, the timing's input sets, the re-checked and confirmed calls are always
// computed fresh; a solution learns nothing from the cache it could not compute from problem.toml.
//
// One file per case under kbench_cache_dir()/expected/<key>.bin. The key hashes everything that
// can change the values:
//   - kbench's version and the identity of the running binary (its device, inode, size and
//     modification time): the oracles, the generators and the GPU references are compiled into it,
//     so a rebuilt kbench never reads its predecessor's values;
//   - the problem's name and every file of its folder but solutions/ (problem.toml's shapes, dtypes,
//     initialisations and seeds, the oracle's and generators' sources);
//   - the target and the device's fingerprint (a GPU reference's values are that GPU's);
//   - the shape (index, label, dims) and the seed.
// A file holds its key and a checksum of its values: a missing, truncated, corrupt or foreign file
// is a miss (and the case is computed as before). Writing is atomic and best-effort; the folder is
// pruned, oldest first, when it grows past kExpectedCacheBytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "deck/problem.h"

namespace kb {

inline constexpr int kExpectedCacheFormat = 1;
// A case larger than this is not cached (moe_swiglu's 32K-token outputs would be 2 GB of doubles).
inline constexpr uint64_t kExpectedCacheMaxCaseBytes = uint64_t{64} << 20;
// The folder is pruned to half of this, oldest files first, when a write takes it past it.
inline constexpr uint64_t kExpectedCacheBytes = uint64_t{1} << 30;

// "dev:ino:size:mtime_ns" of /proc/self/exe: changes whenever kbench is rebuilt or replaced.
std::string running_binary_identity();

class ExpectedCache {
 public:
  // `folder`: where the files go (empty: the cache is off and every load misses); the other
  // parameters are the parts of every key this evaluation shares (they are parameters so that tests
  // can vary them). Reads the problem's folder once; throws std::filesystem::filesystem_error when
  // it cannot be read.
  ExpectedCache(std::filesystem::path folder, const Problem& problem, const std::string& target,
                const std::string& device_fingerprint, const std::string& kbench_version, const std::string& binary_identity);

  bool enabled() const { return !folder_.empty(); }
  // The key of `seed`'s case on shape `shape_index` of the problem.
  std::string key(size_t shape_index, uint64_t seed) const;
  // The cached values under `key`, one vector per output of the sizes given, or nullopt. Never throws.
  std::optional<std::vector<std::vector<double>>> load(const std::string& key, const std::vector<size_t>& numels) const;
  // Stores the values under `key` (atomically; nothing for a case over kExpectedCacheMaxCaseBytes
  // or an unwritable folder). Returns whether a file was written. Never throws.
  bool store(const std::string& key, const std::vector<std::vector<double>>& values) const;

 private:
  std::filesystem::path folder_;
  std::vector<ShapeCase> shapes_;  // the problem's
  std::string shared_material_;    // the key's parts common to every case of this evaluation
};

}  // namespace kb
