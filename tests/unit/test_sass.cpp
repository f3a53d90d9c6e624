// The SASS parser and the required-instruction rule, on real cuobjdump output (CUDA 13.0) of the
// kernels in tests/fixtures/sass/src (tests/fixtures/sass/README.md says how it was made).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/result.h"
#include "eval/sass.h"

namespace fs = std::filesystem;
using kb::SassKernel;
using kb::SassListing;

namespace {

std::string fixture(const std::string& name) {
  const fs::path p = fs::path(KBENCH_SOURCE_DIR) / "tests/fixtures/sass" / name;
  std::ifstream in(p);
  if (!in) throw std::runtime_error("missing fixture " + p.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The listing of one fixture library, with its -res-usage figures merged.
SassListing listing(const std::string& stem) {
  SassListing l = kb::parse_cuobjdump_sass(fixture(stem + ".sass"));
  kb::merge_resource_usage(fixture(stem + ".res"), l);
  return l;
}

const SassKernel& kernel(const SassListing& l, const std::string& name, const std::string& arch = "") {
  auto it = std::find_if(l.kernels.begin(), l.kernels.end(),
                         [&](const SassKernel& k) { return k.name == name && (arch.empty() || k.arch == arch); });
  if (it == l.kernels.end()) throw std::runtime_error("no kernel " + name + " " + arch);
  return *it;
}

std::vector<std::string> keys(const std::map<std::string, size_t>& m) {
  std::vector<std::string> v;
  for (const auto& [k, n] : m) v.push_back(k);
  return v;
}

using Classes = std::vector<std::string>;

}  // namespace

TEST(SassClass, StripsPredicateModifiersAndOperands) {
  EXPECT_EQ(kb::sass_class("@!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;"), "HMMA");
  EXPECT_EQ(kb::sass_class("  @UP1 UTMALDG.2D [UR8], [UR12] ;"), "UTMALDG");
  EXPECT_EQ(kb::sass_class("BRA 0x100;"), "BRA");
  EXPECT_EQ(kb::sass_class("NOP;"), "NOP");
  EXPECT_EQ(kb::sass_class("EXIT ;"), "EXIT");
  EXPECT_EQ(kb::sass_class("{ FFMA R1, R2, R3, R4 ;"), "FFMA");
  EXPECT_EQ(kb::sass_class(""), "");
}

TEST(SassClass, FamiliesFollowTheInstructionSetReference) {
  for (const char* c : {"HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA",
                        "UTCIMMA", "UTCQMMA", "UTCOMMA"})
    EXPECT_TRUE(kb::is_tensor_core_class(c)) << c;
  // HFMA2.MMA is a half-precision FMA issued on the MMA pipe, not a matrix instruction.
  for (const char* c : {"HFMA2", "FFMA", "UTCBAR", "LDTM", "UTMALDG", "MMA"}) EXPECT_FALSE(kb::is_tensor_core_class(c)) << c;
  for (const char* c : {"UTMALDG", "UTMASTG", "UTMAPF", "UTMACMDFLUSH", "UBLKCP", "UBLKRED"}) EXPECT_TRUE(kb::is_tma_class(c)) << c;
  for (const char* c : {"LDG", "UTCBAR", "UTCHMMA"}) EXPECT_FALSE(kb::is_tma_class(c)) << c;
  for (const char* c : {"UTCBAR", "UTCATOMSWS", "LDTM", "STTM"}) EXPECT_TRUE(kb::is_tensor_memory_class(c)) << c;
  for (const char* c : {"UTCHMMA", "LDS", "UTMALDG"}) EXPECT_FALSE(kb::is_tensor_memory_class(c)) << c;
}

// Ampere: each warp-level mma.sync variant has its own class.
TEST(SassParse, AmpereMmaSyncClasses) {
  const SassListing l = listing("mma_sync_sm_80");
  EXPECT_EQ(l.archs, (std::set<std::string>{"sm_80"}));
  ASSERT_EQ(l.kernels.size(), 4u);  // qmma_e4m3 has no fp8 path before sm_89 (#if in the source)
  EXPECT_EQ(keys(kernel(l, "_Z9hmma_bf16PKjS0_Pf").tensor_core()), Classes{"HMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z7imma_s8PKjS0_Pi").tensor_core()), Classes{"IMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z8dmma_f64PKdS0_Pd").tensor_core()), Classes{"DMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z7bmma_b1PKjS0_Pi").tensor_core()), Classes{"BMMA"});
  const SassKernel& h = kernel(l, "_Z9hmma_bf16PKjS0_Pf");
  EXPECT_EQ(h.demangled, "hmma_bf16(unsigned int const*, unsigned int const*, float*)");
  EXPECT_EQ(h.arch, "sm_80");
  EXPECT_GT(h.instructions, 10u);
  ASSERT_EQ(h.evidence.size(), 1u);
  EXPECT_NE(h.evidence[0].find("HMMA.16816.F32.BF16"), std::string::npos) << h.evidence[0];
  EXPECT_EQ(h.registers, 16);  // mma_sync_sm_80.res: REG:16
  EXPECT_EQ(h.shared_bytes, 0);
}

// fp8 mma.sync is a native QMMA on Ada and consumer Blackwell, but Hopper and sm_100a emulate it:
// the same PTX becomes F2FP unpacks and HMMA there.
TEST(SassParse, Fp8MmaSyncIsQmmaOnlyWhereTheHardwareHasIt) {
  const std::string qmma = "_Z9qmma_e4m3PKjS0_Pf";
  EXPECT_EQ(keys(kernel(listing("mma_sync_sm_89"), qmma).tensor_core()), Classes{"QMMA"});
  EXPECT_EQ(keys(kernel(listing("mma_sync_sm_120a"), qmma).tensor_core()), Classes{"QMMA"});
  EXPECT_EQ(keys(kernel(listing("mma_sync_sm_90a"), qmma).tensor_core()), Classes{"HMMA"});
  EXPECT_EQ(keys(kernel(listing("mma_sync_sm_100a"), qmma).tensor_core()), Classes{"HMMA"});
  // ... and b1 mma.sync is emulated with IMMA from sm_100 on.
  EXPECT_EQ(keys(kernel(listing("mma_sync_sm_100a"), "_Z7bmma_b1PKjS0_Pi").tensor_core()), Classes{"IMMA"});
}

TEST(SassParse, HopperWarpgroupMmaAndTma) {
  const SassListing l = listing("hopper_sm_90a");
  EXPECT_EQ(l.archs, (std::set<std::string>{"sm_90a"}));
  EXPECT_EQ(keys(kernel(l, "_Z10hgmma_bf16mmPf").tensor_core()), Classes{"HGMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z8igmma_s8mmPi").tensor_core()), Classes{"IGMMA"});
  const SassKernel& q = kernel(l, "_Z10qgmma_e4m3mmPf");
  EXPECT_EQ(keys(q.tensor_core()), Classes{"QGMMA"});
  ASSERT_FALSE(q.evidence.empty());
  EXPECT_NE(q.evidence[0].find("QGMMA.64x8x32.F32.E4M3.E4M3"), std::string::npos) << q.evidence[0];
  const SassKernel& t = kernel(l, "_Z8tma_copyPKvS0_PKfPf");
  EXPECT_TRUE(t.tensor_core().empty());
  EXPECT_EQ(keys(t.tma()), (Classes{"UBLKCP", "UTMACMDFLUSH", "UTMALDG", "UTMASTG"}));
  EXPECT_EQ(t.shared_bytes, 6152);  // 4096 + 1024 + 8 bytes of tile, flat and barrier, aligned
  EXPECT_EQ(t.registers, 10);
}

TEST(SassParse, BlackwellTcgen05Family) {
  const SassListing l = listing("blackwell_sm_100a");
  EXPECT_EQ(l.archs, (std::set<std::string>{"sm_100a"}));
  EXPECT_EQ(keys(kernel(l, "_Z11utchmma_f16mmjPf").tensor_core()), Classes{"UTCHMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z10utcqmma_f8mmjPf").tensor_core()), Classes{"UTCQMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z10utcimma_i8mmjPf").tensor_core()), Classes{"UTCIMMA"});
  EXPECT_EQ(keys(kernel(l, "_Z12utcomma_mxf4mmjPf").tensor_core()), Classes{"UTCOMMA"});
  const auto tm = kernel(l, "_Z11utchmma_f16mmjPf").tensor_memory();
  EXPECT_TRUE(tm.count("UTCBAR") && tm.count("LDTM") && tm.count("UTCATOMSWS")) << keys(tm).size();
}

// Two archs in one library, spills and local arrays, mangled template names.
TEST(SassParse, MultiArchSpillsAndNames) {
  const SassListing l = listing("plain_multi");
  EXPECT_EQ(l.archs, (std::set<std::string>{"sm_80", "sm_90a"}));
  EXPECT_EQ(l.kernels.size(), 6u);
  const std::string scale = "_ZN4demo9scale_addIfLi4EEEvPKT_PS1_S1_i";
  EXPECT_EQ(kernel(l, scale, "sm_90a").demangled, "void demo::scale_add<float, 4>(float const*, float*, float, int)");
  EXPECT_EQ(kernel(l, "local_array", "sm_90a").demangled, "");  // extern "C": not a mangled name
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const SassKernel& s = kernel(l, "_Z6spillsPKfPfi", arch);
    EXPECT_EQ(s.registers, 32) << arch;  // __launch_bounds__(1024, 2)
    EXPECT_GT(s.count("STL"), 0u) << arch;
    EXPECT_GT(s.count("LDL"), 0u) << arch;
    EXPECT_GT(*s.stack_bytes, 0) << arch;
    EXPECT_EQ(kernel(l, scale, arch).count("STL"), 0u) << arch;
    EXPECT_EQ(kernel(l, "local_array", arch).stack_bytes, 256) << arch;  // float a[64]
    EXPECT_TRUE(s.tensor_core().empty());
  }
  EXPECT_EQ(kernel(l, "_Z6spillsPKfPfi", "sm_80").stack_bytes, 192);
  EXPECT_EQ(kernel(l, "_Z6spillsPKfPfi", "sm_90a").stack_bytes, 200);
  kb::SassReport r;
  r.listing = l;
  EXPECT_EQ(r.kernel_names(), (std::set<std::string>{scale, "_Z6spillsPKfPfi", "local_array"}));
}

TEST(SassParse, NoDeviceCodeAndNoiseGiveNoKernels) {
  EXPECT_TRUE(kb::parse_cuobjdump_sass("").kernels.empty());
  EXPECT_TRUE(kb::parse_cuobjdump_sass("cuobjdump info    : File 'x.so' does not contain device code\n").kernels.empty());
  // Instruction lines before any "Function :" header belong to nothing.
  EXPECT_TRUE(kb::parse_cuobjdump_sass("        /*0000*/  HMMA.16816.F32 R0, R2, R4, R0 ;  /* 0x0 */\n").kernels.empty());
}

TEST(RequiredKey, MostSpecificApplicableKeyWins) {
  using P = std::map<std::string, std::vector<std::string>>;
  const P exact{{"sm_90a", {"QGMMA"}}, {"sm_90", {"HMMA"}}};
  EXPECT_EQ(kb::applicable_required_key(exact, "sm_90a"), "sm_90a");
  EXPECT_EQ(kb::applicable_required_key(exact, "sm_90"), "sm_90");
  EXPECT_EQ(kb::applicable_required_key(P{{"sm_90", {"HMMA"}}}, "sm_90a"), "sm_90");  // plain covers arch-specific
  EXPECT_EQ(kb::applicable_required_key(P{{"sm_90a", {"QGMMA"}}}, "sm_90"), "");     // never the other way round
  EXPECT_EQ(kb::applicable_required_key(P{{"sm_90a", {"QGMMA"}}}, "sm_80"), "");
  const P family{{"sm_100f", {"UTCQMMA"}}, {"sm_103f", {"UTCOMMA"}}, {"sm_100", {"HMMA"}}};
  EXPECT_EQ(kb::applicable_required_key(family, "sm_100a"), "sm_100f");  // family beats plain
  EXPECT_EQ(kb::applicable_required_key(family, "sm_103a"), "sm_103f");  // highest minor <= 3
  EXPECT_EQ(kb::applicable_required_key(family, "sm_120a"), "");         // another major
  EXPECT_EQ(kb::applicable_required_key(family, "sm_100"), "sm_100");    // exact first
  EXPECT_EQ(kb::applicable_required_key(family, "bogus"), "");
}

TEST(RequiredKey, ArchsOfTheBuildCommand) {
  EXPECT_EQ(kb::archs_in_build_command("nvcc -O3 '-gencode=arch=compute_90a,code=sm_90a' x.cu"),
            (std::vector<std::string>{"sm_90a"}));
  EXPECT_EQ(kb::archs_in_build_command("nvcc -arch=sm_80 -gencode arch=compute_100a,code=[sm_100a,compute_100a]"),
            (std::vector<std::string>{"sm_80", "sm_100a"}));
  EXPECT_TRUE(kb::archs_in_build_command("g++ -O3 solution.cpp").empty());
}

namespace {

kb::SassReport report_of(const std::string& stem) {
  kb::SassReport r;
  r.available = true;
  r.tool = "cuobjdump";
  r.listing = listing(stem);
  return r;
}

const std::map<std::string, std::vector<std::string>> kRequireQgmma{{"sm_90a", {"QGMMA"}}};
const std::string kBuild = "nvcc -O3 -gencode=arch=compute_90a,code=sm_90a solution.cu";

}  // namespace

TEST(RequiredInstructions, QgmmaRequirementAcceptsWgmmaFp8) {
  kb::SassReport r = report_of("hopper_sm_90a");
  EXPECT_FALSE(kb::check_required_instructions(kRequireQgmma, kBuild, r));
  ASSERT_EQ(r.required.size(), 1u);
  EXPECT_EQ(r.required[0].arch, "sm_90a");
  EXPECT_EQ(r.required[0].found, Classes{"QGMMA"});
  EXPECT_TRUE(r.required[0].satisfied());
  EXPECT_EQ(keys(r.required[0].tensor_core_found), (Classes{"HGMMA", "IGMMA", "QGMMA"}));
}

TEST(RequiredInstructions, QgmmaRequirementRejectsHmmaOnly) {
  kb::SassReport r = report_of("mma_sync_sm_90a");  // fp8 mma.sync: emulated with HMMA on Hopper
  auto v = kb::check_required_instructions(kRequireQgmma, kBuild, r);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->verdict(), kb::Verdict::fail);
  EXPECT_EQ(v->reason, kb::Reason::missing_required_instruction);
  EXPECT_EQ(kb::reason_name(v->reason), "missing_required_instruction");
  for (const char* s : {"sm_90a", "QGMMA", "HMMA x", "policy.required_instructions.sm_90a", "qmma_e4m3"})
    EXPECT_NE(v->message.find(s), std::string::npos) << s << " in " << v->message;
  ASSERT_EQ(r.required.size(), 1u);
  EXPECT_FALSE(r.required[0].satisfied());
}

TEST(RequiredInstructions, AnyOfTheListedClassesWillDo) {
  kb::SassReport r = report_of("mma_sync_sm_90a");
  EXPECT_FALSE(kb::check_required_instructions({{"sm_90", {"QGMMA", "HMMA"}}}, kBuild, r));
  EXPECT_EQ(r.required.at(0).key, "sm_90");
  EXPECT_EQ(r.required.at(0).found, Classes{"HMMA"});
}

TEST(RequiredInstructions, NothingToCheckWhenNoKeyAppliesOrTheListIsEmpty) {
  kb::SassReport r = report_of("mma_sync_sm_80");
  EXPECT_FALSE(kb::check_required_instructions(kRequireQgmma, "nvcc -gencode=arch=compute_80,code=sm_80", r));
  EXPECT_TRUE(r.required.empty());
  kb::SassReport h = report_of("mma_sync_sm_90a");
  EXPECT_FALSE(kb::check_required_instructions({{"sm_90a", {}}}, kBuild, h));
  EXPECT_TRUE(h.required.empty());
}

// A library with no machine code for the arch kbench built for contains none of the classes.
TEST(RequiredInstructions, NoSassAtAllFailsForTheBuiltArch) {
  kb::SassReport r;
  r.available = true;
  r.note = "the library contains no device code";
  auto v = kb::check_required_instructions(kRequireQgmma, kBuild, r);
  ASSERT_TRUE(v);
  EXPECT_EQ(kb::reason_name(v->reason), "missing_required_instruction");
  EXPECT_NE(v->message.find("no SASS for this arch"), std::string::npos) << v->message;
}

// No disassembler: kbench cannot tell, and says so instead of passing (fail closed, not blamed).
TEST(RequiredInstructions, UnreadableSassIsAnErrorNotAPass) {
  kb::SassReport r;
  r.note = "no cuobjdump (looked at /nowhere/cuobjdump)";
  auto v = kb::check_required_instructions(kRequireQgmma, kBuild, r);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->verdict(), kb::Verdict::error);
  EXPECT_EQ(v->reason, kb::Reason::instructions_unverified);
  EXPECT_NE(v->message.find("/nowhere/cuobjdump"), std::string::npos) << v->message;
  // ... but only when a requirement applies.
  kb::SassReport none;
  EXPECT_FALSE(kb::check_required_instructions({}, kBuild, none));
}

TEST(SassReport, JsonCarriesFactsPerKernel) {
  kb::SassReport r = report_of("hopper_sm_90a");
  kb::check_required_instructions(kRequireQgmma, kBuild, r);
  const auto j = kb::to_json(r);
  EXPECT_EQ(j["available"], true);
  EXPECT_EQ(j["archs"], nlohmann::json::array({"sm_90a"}));
  EXPECT_EQ(j["kernel_names"].size(), 4u);
  const auto& k = *std::find_if(j["kernels"].begin(), j["kernels"].end(),
                                [](const auto& x) { return x["name"] == "_Z8tma_copyPKvS0_PKfPf"; });
  EXPECT_EQ(k["tma"]["UTMALDG"], 1);
  EXPECT_EQ(k["shared_bytes"], 6152);
  EXPECT_EQ(k["local_stores"], 0);
  EXPECT_EQ(k["demangled"], "tma_copy(void const*, void const*, float const*, float*)");
  EXPECT_EQ(j["required"][0]["satisfied"], true);
}

// The check's proof pair, as cuobjdump printed the two fixture solutions built for sm_90a
// (tests/fixtures/sass/solutions; test_sass_build.cpp does the same live where cuobjdump exists).
TEST(RequiredInstructions, Bf16UpcastExploitFailsAndHonestFp8WgmmaPasses) {
  kb::SassReport exploit = report_of("exploit-bf16-upcast_sm_90a");
  ASSERT_EQ(exploit.listing.kernels.size(), 1u);
  EXPECT_EQ(exploit.listing.kernels[0].demangled,
            "(anonymous namespace)::fp8_gemm_tile(__nv_fp8_e4m3 const*, __nv_fp8_e4m3 const*, float*)");
  auto v = kb::check_required_instructions(kRequireQgmma, kBuild, exploit);
  ASSERT_TRUE(v);
  EXPECT_EQ(kb::reason_name(v->reason), "missing_required_instruction");
  EXPECT_NE(v->message.find("HMMA x1"), std::string::npos) << v->message;
  EXPECT_NE(v->message.find("fp8_gemm_tile"), std::string::npos) << v->message;

  kb::SassReport honest = report_of("honest-qgmma_sm_90a");
  EXPECT_FALSE(kb::check_required_instructions(kRequireQgmma, kBuild, honest));
  EXPECT_EQ(honest.required.at(0).found, Classes{"QGMMA"});
}
