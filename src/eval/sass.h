// What a cuda solution's machine code is made of, read from the built library with the CUDA
// toolkit's disassembler (`cuobjdump -sass` and `cuobjdump -res-usage`): the kernels it defines,
// the instruction classes each uses (tensor-core MMA, TMA and bulk copies, tensor memory, local
// memory), its registers, stack and static shared memory. These facts go into result.json
// (`sass`, docs/result-schema.md), feed the problem's `policy.required_instructions` check
// (docs/problem-format.md) and name the kernels runtime provenance may attribute to the solution.
//
// The parsers are pure functions of cuobjdump's text, tested on real output kept in
// tests/fixtures/sass/; only inspect_sass() and find_cuobjdump() touch the system.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/finding.h"

namespace kb {

// An instruction's class: its opcode without modifiers or predicate
// ("@!P0 HMMA.16816.F32.BF16 R4, ..." and "HMMA.16816.F32" are both "HMMA").
std::string sass_class(std::string_view instruction);

// Families of classes, by the names cuobjdump prints (NVIDIA's CUDA Binary Utilities, "Instruction
// Set Reference", Ampere/Ada, Hopper and Blackwell tables; each confirmed on real output of CUDA
// 13.0's cuobjdump in tests/fixtures/sass/):
//  - tensor core: every class ending in "MMA": HMMA, IMMA, DMMA, BMMA (warp mma.sync, sm_80+),
//    QMMA (fp8 mma.sync on sm_89 and sm_120), OMMA (fp4, sm_120), HGMMA, IGMMA, QGMMA, BGMMA
//    (warpgroup wgmma, sm_90a), UTCHMMA, UTCIMMA, UTCQMMA, UTCOMMA (tcgen05.mma, sm_100a);
//  - TMA and bulk copies: classes beginning with UTMA (UTMALDG, UTMASTG, UTMAPF, UTMAREDG,
//    UTMACMDFLUSH, ...) or UBLK (UBLKCP, UBLKPF, UBLKRED);
//  - tensor memory (sm_100a): the other UTC* classes (UTCBAR, UTCATOMSWS, UTCCP, UTCSHIFT) and
//    LDTM/STTM;
//  - local memory: STL and LDL (register spills and dynamically indexed local arrays).
bool is_tensor_core_class(std::string_view cls);
bool is_tma_class(std::string_view cls);
bool is_tensor_memory_class(std::string_view cls);

struct SassKernel {
  std::string name;       // as in the binary (mangled for C++ kernels)
  std::string demangled;  // the C++ name, or "" when `name` is not a mangled name
  std::string arch;       // "sm_90a"
  size_t instructions = 0;
  std::map<std::string, size_t> classes;  // instruction class -> how many
  // The first few tensor-core and TMA instructions, "0060: QGMMA.64x8x32.F32.E4M3.E4M3 R24, ..."
  // (offset in the kernel, instruction): the evidence behind the facts.
  std::vector<std::string> evidence;
  // From `cuobjdump -res-usage`, when it reported the kernel.
  std::optional<int> registers, stack_bytes, shared_bytes, local_bytes;
  // Where the solution defines it, when kbench can say: a Python solution's Triton kernel, by its
  // function's `def` (eval/jit_kernels.h, triton_kernel_definitions); the file is relative to the
  // solution's staged sources (its own files and its kits' modules). Empty and 0 otherwise.
  std::string source_file;
  int source_line = 0;

  size_t count(std::string_view cls) const;
  std::map<std::string, size_t> tensor_core() const;
  std::map<std::string, size_t> tma() const;
  std::map<std::string, size_t> tensor_memory() const;
};

// What cuobjdump says about one library.
struct SassListing {
  std::vector<SassKernel> kernels;  // one per (arch, kernel), in the order printed
  std::set<std::string> archs;      // every arch with machine code ("sm_80", "sm_90a")
};

// Parses `cuobjdump -sass` output: "Fatbin elf code" headers (arch = sm_XX), "Function : NAME"
// headers, and instruction lines "/*0060*/  OPCODE operands ;  /* encoding */". Lines it does not
// recognise (PTX listings, info messages) are skipped.
SassListing parse_cuobjdump_sass(std::string_view text);

// Adds `cuobjdump -res-usage` figures ("Function NAME:" then "REG:90 STACK:0 SHARED:1024 LOCAL:0
// ...") to the kernels of `listing` with the same arch and name. Returns how many it matched.
size_t merge_resource_usage(std::string_view text, SassListing& listing);

// One entry of the problem's policy.required_instructions applied to one arch the library has.
struct RequiredInstructions {
  std::string arch;                  // the solution's arch ("sm_90a")
  std::string key;                   // the policy key that applies to it ("sm_90a", "sm_90", "sm_100f")
  std::vector<std::string> classes;  // any one of these must appear
  std::vector<std::string> found;    // those of `classes` that do appear (in any kernel of `arch`)
  std::map<std::string, size_t> tensor_core_found;  // every tensor-core class in `arch`'s SASS
  bool satisfied() const { return !found.empty(); }
};

// The key of `policy` (arch -> classes) that applies to the solution's `arch`, or "" when none does.
// Keys name CUDA archs as nvcc does, and the most specific applicable key wins:
//   1. the same arch ("sm_90a" for sm_90a, "sm_100" for sm_100);
//   2. a family key "sm_XYf": same major version, minor at least the key's ("sm_100f" applies to
//      sm_100, sm_100a, sm_103a; the highest such minor wins);
//   3. a plain key "sm_XY" applies to the arch-specific and family variants of the same version
//      ("sm_90" applies to sm_90a), since those run everything plain sm_90 code can.
// An arch-specific key ("sm_90a") never applies to another arch, plain sm_90 included.
std::string applicable_required_key(const std::map<std::string, std::vector<std::string>>& policy,
                                    const std::string& arch);

// The archs an nvcc command line builds machine code for ("-gencode=arch=compute_90a,code=sm_90a",
// "-arch=sm_80"), in order: how kbench knows the target arch when the library holds no SASS.
std::vector<std::string> archs_in_build_command(const std::string& command);

// The facts of one solution library (result.json `sass`).
struct SassReport {
  bool available = false;  // the disassembler ran and its output was read
  std::string tool;        // the cuobjdump used
  std::string note;        // why the facts are missing or partial; "" when complete
  SassListing listing;
  std::vector<RequiredInstructions> required;  // filled by check_required_instructions

  // Every kernel name the library defines (mangled, as CUPTI reports kernels), over all archs.
  std::set<std::string> kernel_names() const;
};

nlohmann::json to_json(const SassReport& r);

// The cuobjdump to use: $KBENCH_CUOBJDUMP when set (nullopt if it is not an executable file), else
// the one beside nvcc ($KBENCH_NVCC, then the nvcc kbench was built with), else `cuobjdump` on
// PATH; nullopt when there is none. `*looked` (optional) receives where it looked, for messages.
std::optional<std::filesystem::path> find_cuobjdump(std::string* looked = nullptr);

// Disassembles `library` with cuobjdump -sass and -res-usage. Never throws: a missing or failing
// disassembler gives available = false and a note saying why. A library with no device code
// ("does not contain device code") is available with no kernels.
// With `sandbox`, cuobjdump runs in a bubblewrap sandbox that sees only the system, the toolkit and
// the library (it parses untrusted input).
SassReport inspect_sass(const std::filesystem::path& library, bool sandbox = false);

// Thrown by library_kernel_names when the names cannot be read.
struct SassUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The set of kernel names (mangled) defined in a built solution library: what runtime provenance
// (CUPTI kernel records) compares each kernel that ran against. Throws SassUnavailable, saying
// why, when the library cannot be disassembled.
std::set<std::string> library_kernel_names(const std::filesystem::path& library);

// Applies the problem's policy.required_instructions to `report` for every arch the library was
// built for (those in its SASS, and those `build_command` asks for, which matters when the library
// holds no SASS at all), recording each applicable entry in report.required. Returns:
//  - missing_required_instruction (verdict fail) when an arch's SASS holds none of its required
//    classes (the message names the arch, the key, the required classes and the tensor-core classes
//    found; the evidence is what was compared and each kernel's tensor-core/TMA lines of that arch);
//  - instructions_unverified (verdict error) when a requirement applies but the SASS could not be read
//    (no cuobjdump): kbench cannot tell, so it neither passes nor blames the solution;
//  - nullopt otherwise (no requirement applies, an empty list, or every requirement is met).
std::optional<Finding> check_required_instructions(const std::map<std::string, std::vector<std::string>>& policy,
                                                  const std::string& build_command, SassReport& report);

}  // namespace kb
