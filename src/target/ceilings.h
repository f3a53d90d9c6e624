// Hardware ceilings: the datasheet figures of a GPU (hardware/*.toml) and the ceilings measured
// on the current machine (`kbench ceilings`). peak_fraction is measured against these.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb {

struct Ceiling {
  double value = 0;    // FLOP/s for compute keys, bytes/s for memory keys
  std::string source;  // datasheet reference, or how it was measured
};

// Compute keys (dense, no sparsity): fp64, fp32 (CUDA-core / SIMD FMA), fp64_tc, tf32_tc, bf16_tc,
// fp16_tc, fp8_tc, int8_tc, fp4_tc. Memory keys: dram. docs/hardware.md defines each.
const std::vector<std::string>& compute_keys();
const std::vector<std::string>& memory_keys();

struct Ceilings {
  std::string id;                  // hardware file stem ("h100_sxm") or "host-<machine>"
  std::string name;                // human name of the device
  bool measured = false;           // true: measured on this machine; false: datasheet
  std::map<std::string, Ceiling> compute;
  std::map<std::string, Ceiling> memory;

  // Throws std::out_of_range naming the key and the keys present.
  const Ceiling& compute_peak(const std::string& key) const;
  const Ceiling& memory_peak(const std::string& key) const;
};

nlohmann::json to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j);  // throws std::runtime_error on a bad document

// A datasheet entry of hardware/<id>.toml.
struct HardwareSpec {
  Ceilings ceilings;               // measured == false
  std::vector<std::string> match;  // substrings of the CUDA device name that identify this GPU
  std::vector<std::string> exclude;  // substrings that veto a match ("3090 Ti" for the 3090); optional
  std::string arch;                // "sm_90a", ...
  std::filesystem::path file;      // the TOML it was loaded from
};

class HardwareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads every hardware/*.toml, sorted by id. Throws HardwareError naming file and key.
std::vector<HardwareSpec> load_hardware(const std::filesystem::path& dir);
// The first spec with a match substring, and none of its exclude substrings, in device_name
// (case-insensitive), or nullptr.
const HardwareSpec* match_hardware(const std::vector<HardwareSpec>& specs, std::string_view device_name);

// Host (CPU) ceilings, measured: STREAM-style copy bandwidth (bytes read + written, all cores)
// and the FMA rates of fp32 and fp64 on all cores. Takes about a second or two.
Ceilings measure_host_ceilings();
// Cached per machine (identified by /etc/machine-id or hostname, CPU model and core count) under
// $KBENCH_CACHE_DIR or $XDG_CACHE_HOME/kbench or ~/.cache/kbench; measured on a miss or when
// `refresh` is set.
Ceilings host_ceilings(bool refresh = false);
std::filesystem::path kbench_cache_dir();

}  // namespace kb
