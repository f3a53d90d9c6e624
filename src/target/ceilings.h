// Hardware ceilings: the datasheet figures of a GPU (hardware/*.toml) and the ceilings measured
// on the current machine (`kbench ceilings`). peak_fraction is measured against these.
#pragma once

#include <filesystem>
#include <functional>
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
  bool measured = false;           // true: compute/memory were measured on this machine; false: datasheet
  std::map<std::string, Ceiling> compute;  // the figures scoring uses (peak_fraction)
  std::map<std::string, Ceiling> memory;

  // Beside datasheet figures (measured == false): what this GPU actually reached on the same keys
  // (`kbench ceilings --target cuda`), reported next to the datasheet figure, never used for scoring.
  // Empty for the host target (its compute/memory are already measured) and when nothing was measured.
  std::map<std::string, Ceiling> measured_compute;
  std::map<std::string, Ceiling> measured_memory;
  // Keys a measurement tried and could not measure -> why. A reason that begins "failed:" is an error
  // that may not recur (out of memory, a CUDA or cuBLASLt error); any other reason is a property of
  // the device ("needs compute capability >= 8.9"). A measurement with a "failed:" reason is not cached.
  std::map<std::string, std::string> unmeasured;
  // The launch floor (target/launch_floor.h): the time, in seconds, that kbench's cold timer gives a
  // call doing the least a solution can (cuda: one empty kernel on the handed stream; host: nothing).
  // No shape of any problem can be timed faster, so it bounds the achievable time from below beside
  // the compute and memory ceilings (eval/roofline.h, achievable_fraction). Measured with the
  // ceilings and cached with them; unset when nothing measured it (cuda before `kbench ceilings`).
  std::optional<Ceiling> launch_floor;

  // Throws std::out_of_range naming the key and the keys present.
  const Ceiling& compute_peak(const std::string& key) const;
  const Ceiling& memory_peak(const std::string& key) const;
};

// {id, name, measured, compute, memory, measured_compute, measured_memory, unmeasured, launch_floor};
// the last four are optional when read (documents written before they existed); launch_floor is
// null when unset.
nlohmann::json to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j);  // throws std::runtime_error on a bad document

// `datasheet` with the figures of `measurement` (a Ceilings with measured == true) as its
// measured_compute / measured_memory, and the measurement's unmeasured reasons and launch floor.
Ceilings with_measurement(Ceilings datasheet, const Ceilings& measurement);
// True when some unmeasured reason begins with "failed:" (see Ceilings::unmeasured).
bool measurement_failed_somewhere(const Ceilings& measurement);

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
// `refresh` is set. With `measure_floor` (the host target passes its launch floor's measurement,
// target/launch_floor.h), ceilings without a launch floor get one, measured and cached with them:
// a cache written before the floor existed gains it without the rest being measured again.
Ceilings host_ceilings(bool refresh = false, const std::function<Ceiling()>& measure_floor = {});
// The cached host ceilings of this machine, or nullopt when none are cached; never measures.
std::optional<Ceilings> cached_host_ceilings();
// What the host ceilings cache is keyed on: machine id, CPU model, online CPUs, OpenMP threads.
std::string host_machine_key();
std::filesystem::path kbench_cache_dir();

// --- The cache of measured ceilings (host and cuda) ------------------------------------------
// A cache file is JSON {format, machine_key, measured_at, ceilings}. `key` identifies the measured
// hardware (machine and CPU for the host; GPU UUID and driver version for cuda) and is stored in the
// file and compared on read.

// The cached ceilings, or nullopt for a missing, corrupt, truncated, other-format or foreign-key file.
std::optional<Ceilings> read_ceilings_cache(const std::filesystem::path& file, const std::string& key);
// Atomic: a temporary file in the same directory, flushed, renamed over `file`; concurrent readers
// see the old file or the new one. Returns false (and leaves nothing behind) when it cannot write.
bool write_ceilings_cache(const std::filesystem::path& file, const std::string& key, const Ceilings& c);
// kbench_cache_dir()/ceilings/<device_id with unsafe characters replaced>.json
std::filesystem::path device_ceilings_cache_file(const std::string& device_id);

// A device's measured ceilings through its cache file:
//   - the cached measurement when the file holds one for `key`, unless `refresh`;
//   - otherwise, when `measure` is set: measure() is called, its result returned and cached (not
//     cached when measurement_failed_somewhere, so a transient failure is retried next time);
//   - otherwise nullopt (nothing is measured: the caller must not wait for a measurement).
// A corrupt or foreign cache file counts as a miss. With `measure_floor` and `measure` set, a
// measurement without a launch floor (a fresh one, or a cache written before the floor existed) gets
// one, and is cached with it: the rest is not measured again. A floor that throws is recorded in
// `unmeasured` as "failed: ..." (so the measurement is returned but not cached).
std::optional<Ceilings> cached_measurement(const std::filesystem::path& file, const std::string& key, bool refresh,
                                           bool measure, const std::function<Ceilings()>& measure_fn,
                                           const std::function<Ceiling()>& measure_floor = {});

}  // namespace kb
