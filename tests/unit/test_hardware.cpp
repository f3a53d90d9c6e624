// hardware/*.toml: the real datasheet files load and carry the published figures; device names map
// to the right file; malformed files are rejected with the file and the key named.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <set>

#include <unistd.h>

#include "target/ceilings.h"

namespace kb {
namespace {

// The source tree, as the build defines it for tests.
std::filesystem::path source_root() { return KBENCH_SOURCE_DIR; }

std::filesystem::path hardware_dir() { return source_root() / "hardware"; }

class HwTempDir {
 public:
  HwTempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kbench-hw-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~HwTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

const HardwareSpec& spec_by_id(const std::vector<HardwareSpec>& specs, const std::string& id) {
  for (const auto& s : specs)
    if (s.ceilings.id == id) return s;
  throw std::runtime_error("no hardware spec " + id);
}

void expect_near_rel(double got, double want, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), rel * want) << what << ": got " << got << ", want " << want;
}

TEST(Hardware, EveryFileInTheRepositoryLoads) {
  ASSERT_TRUE(std::filesystem::is_directory(hardware_dir())) << hardware_dir();
  size_t toml_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(hardware_dir()))
    if (e.path().extension() == ".toml") ++toml_files;
  std::vector<HardwareSpec> specs;
  ASSERT_NO_THROW(specs = load_hardware(hardware_dir()));
  EXPECT_EQ(specs.size(), toml_files);
  std::set<std::string> ids;
  for (const auto& s : specs) ids.insert(s.ceilings.id);
  for (const char* id : {"h100_sxm", "h200", "b200", "rtx_pro_6000_blackwell", "a100_sxm", "l40s", "rtx_3090"})
    EXPECT_TRUE(ids.count(id)) << id;
  EXPECT_TRUE(std::is_sorted(specs.begin(), specs.end(),
                             [](const auto& a, const auto& b) { return a.ceilings.id < b.ceilings.id; }));
}

TEST(Hardware, HopperFiguresMatchTheWhitepaper) {
  const auto specs = load_hardware(hardware_dir());
  const Ceilings& h100 = spec_by_id(specs, "h100_sxm").ceilings;
  // Dense anchors of the H100 SXM5 (with-sparsity figures are twice these).
  expect_near_rel(h100.compute_peak("bf16_tc").value, 989.4e12, 1e-3, "H100 bf16_tc");
  expect_near_rel(h100.compute_peak("fp16_tc").value, 989.4e12, 1e-3, "H100 fp16_tc");
  expect_near_rel(h100.compute_peak("fp8_tc").value, 1978.9e12, 1e-3, "H100 fp8_tc");
  expect_near_rel(h100.compute_peak("tf32_tc").value, 494.7e12, 1e-3, "H100 tf32_tc");
  expect_near_rel(h100.compute_peak("fp64_tc").value, 66.9e12, 1e-3, "H100 fp64_tc");
  expect_near_rel(h100.compute_peak("fp64").value, 33.5e12, 1e-3, "H100 fp64");
  expect_near_rel(h100.compute_peak("fp32").value, 66.9e12, 1e-3, "H100 fp32");
  expect_near_rel(h100.memory_peak("dram").value, 3.35e12, 1e-3, "H100 dram");
  EXPECT_EQ(spec_by_id(specs, "h100_sxm").arch, "sm_90a");

  // H200: the same GH100 compute, faster HBM3e.
  const Ceilings& h200 = spec_by_id(specs, "h200").ceilings;
  for (const auto& [key, c] : h100.compute) {
    ASSERT_TRUE(h200.compute.count(key)) << key;
    EXPECT_DOUBLE_EQ(h200.compute.at(key).value, c.value) << key;
  }
  expect_near_rel(h200.memory_peak("dram").value, 4.8e12, 1e-3, "H200 dram");
}

TEST(Hardware, EveryGpuHasDramFp32AndSourcedPlausibleEntries) {
  for (const auto& spec : load_hardware(hardware_dir())) {
    const Ceilings& c = spec.ceilings;
    SCOPED_TRACE(c.id);
    EXPECT_FALSE(c.measured);
    EXPECT_FALSE(c.name.empty());
    EXPECT_EQ(spec.file.stem().string(), c.id);
    EXPECT_EQ(spec.arch.rfind("sm_", 0), 0u) << spec.arch;
    EXPECT_FALSE(spec.match.empty());
    ASSERT_TRUE(c.compute.count("fp32"));
    ASSERT_TRUE(c.memory.count("dram"));
    // Units were converted: every GPU here does 0.1-20,000 TFLOP/s and 0.1-20 TB/s. A figure left in
    // TFLOP/s or GB/s by mistake would land far outside.
    for (const auto& [key, e] : c.compute) {
      EXPECT_FALSE(e.source.empty()) << key;
      EXPECT_GE(e.value, 0.1e12) << key;
      EXPECT_LE(e.value, 20e15) << key;
    }
    for (const auto& [key, e] : c.memory) {
      EXPECT_FALSE(e.source.empty()) << key;
      EXPECT_GE(e.value, 0.1e12) << key;
      EXPECT_LE(e.value, 20e12) << key;
    }
    // Orderings that hold on every NVIDIA GPU: narrower types are never slower on the tensor cores,
    // and tensor cores never lose to the FP32 pipes.
    auto v = [&](const char* k) { return c.compute.count(k) ? c.compute.at(k).value : NAN; };
    auto ordered = [&](const char* slower, const char* faster) {
      if (c.compute.count(slower) && c.compute.count(faster)) {
        EXPECT_LE(v(slower), v(faster)) << slower << " vs " << faster;
      }
    };
    ordered("fp64", "fp32");
    ordered("fp32", "tf32_tc");
    ordered("tf32_tc", "bf16_tc");
    ordered("bf16_tc", "fp8_tc");
    ordered("fp8_tc", "fp4_tc");
    ordered("fp64", "fp64_tc");
  }
}

TEST(Hardware, DeviceNamesMatchTheRightFile) {
  const auto specs = load_hardware(hardware_dir());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA H100 80GB HBM3", "h100_sxm"},
      {"nvidia h100 80gb hbm3", "h100_sxm"},  // case-insensitive
      {"NVIDIA H100 PCIe", ""},
      {"NVIDIA H100 NVL", ""},
      {"NVIDIA H200", "h200"},
      {"NVIDIA H200 NVL", ""},
      {"NVIDIA GH200 480GB", ""},
      {"NVIDIA B200", "b200"},
      {"NVIDIA GB200", ""},
      {"NVIDIA A100-SXM4-80GB", "a100_sxm"},
      {"NVIDIA A100-SXM4-40GB", ""},
      {"NVIDIA A100 80GB PCIe", ""},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L40", ""},
      {"NVIDIA GeForce RTX 3090", "rtx_3090"},
      {"NVIDIA GeForce RTX 3090 Ti", ""},
      {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx_pro_6000_blackwell"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx_pro_6000_blackwell"},
      {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", ""},
      {"", ""},
  };
  for (const auto& [device, want] : cases) {
    const HardwareSpec* got = match_hardware(specs, device);
    EXPECT_EQ(got ? got->ceilings.id : "", want) << "device name '" << device << "'";
    // Never ambiguous: at most one file claims a device, so "the first match" is "the match".
    int claims = 0;
    for (const auto& s : specs) claims += match_hardware(std::vector<HardwareSpec>{s}, device) != nullptr;
    EXPECT_LE(claims, 1) << device;
  }
  EXPECT_EQ(match_hardware({}, "NVIDIA H100 80GB HBM3"), nullptr);
}

// A valid file; each malformed case edits one thing.
std::string valid_toml(const std::string& id) {
  return "id = \"" + id + R"("
name = "Test GPU"
arch = "sm_90a"
match = ["Test GPU 1"]

[compute]
fp32    = { value = 60,    unit = "TFLOP/s", source = "test datasheet, table 1" }
bf16_tc = { value = 1000,  unit = "TFLOP/s", source = "test datasheet, table 1" }
int8_tc = { value = 2,     unit = "POP/s",   source = "test datasheet, table 1" }

[memory]
dram = { value = 3350, unit = "GB/s", source = "test datasheet, table 2" }
)";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  if (pos == std::string::npos) throw std::logic_error("test text lacks '" + from + "'");
  return s.replace(pos, from.size(), to);
}

TEST(Hardware, LoaderConvertsUnitsToSi) {
  HwTempDir dir;
  dir.write("test_gpu.toml", valid_toml("test_gpu"));
  const auto specs = load_hardware(dir.path());
  ASSERT_EQ(specs.size(), 1u);
  const Ceilings& c = specs[0].ceilings;
  EXPECT_DOUBLE_EQ(c.compute_peak("fp32").value, 60e12);
  EXPECT_DOUBLE_EQ(c.compute_peak("bf16_tc").value, 1000e12);
  EXPECT_DOUBLE_EQ(c.compute_peak("int8_tc").value, 2e15);
  EXPECT_DOUBLE_EQ(c.memory_peak("dram").value, 3.35e12);
  EXPECT_EQ(c.compute_peak("fp32").source, "test datasheet, table 1");
  EXPECT_EQ(specs[0].file, dir.path() / "test_gpu.toml");
}

TEST(Hardware, MalformedFilesNameTheFileAndTheKey) {
  const std::string ok = valid_toml("bad_gpu");
  struct Case {
    const char* what;
    std::string text;
    std::vector<std::string> expect;  // substrings of the error message, besides the file name
  };
  const std::vector<Case> cases = {
      {"syntax error", ok + "\n[memory\n", {":14:", "syntax"}},
      {"missing name", replace(ok, "name = \"Test GPU\"\n", ""), {"name", "missing"}},
      {"missing arch", replace(ok, "arch = \"sm_90a\"\n", ""), {"arch", "missing"}},
      {"missing match", replace(ok, "match = [\"Test GPU 1\"]\n", ""), {"match", "missing"}},
      {"empty match", replace(ok, "[\"Test GPU 1\"]", "[]"), {"match"}},
      {"unknown unit", replace(ok, "value = 60,    unit = \"TFLOP/s\"", "value = 60, unit = \"TFLOPS\""),
       {"compute.fp32.unit", "TFLOPS", "TFLOP/s"}},
      {"memory unit on a compute key", replace(ok, "value = 60,    unit = \"TFLOP/s\"", "value = 60, unit = \"TB/s\""),
       {"compute.fp32.unit", "TB/s"}},
      {"FLOP unit on an integer key", replace(ok, "unit = \"POP/s\"", "unit = \"PFLOP/s\""), {"compute.int8_tc.unit"}},
      {"zero value", replace(ok, "value = 60,", "value = 0,"), {"compute.fp32.value", "positive"}},
      {"negative value", replace(ok, "value = 3350,", "value = -3350,"), {"memory.dram.value", "positive"}},
      {"string value", replace(ok, "value = 60,", "value = \"60\","), {"compute.fp32.value", "number"}},
      {"missing source", replace(ok, ", source = \"test datasheet, table 2\"", ""), {"memory.dram.source", "missing"}},
      {"empty source", replace(ok, "source = \"test datasheet, table 2\"", "source = \" \""), {"memory.dram.source"}},
      {"unknown top-level key", "vendor = \"NVIDIA\"\n" + ok, {"vendor", "unknown top-level key"}},
      {"unknown key inside [memory]", ok + "hbm = 1\n", {"memory.hbm", "unknown memory key"}},
      {"top-level key after a table", replace(ok, "[memory]", "[memmory]"), {"memmory", "unknown top-level key"}},
      {"unknown compute key", replace(ok, "bf16_tc =", "bf16tc ="), {"compute.bf16tc", "unknown"}},
      {"unknown entry key", replace(ok, "value = 60,", "value = 60, sparse = true,"), {"compute.fp32.sparse"}},
      {"id is not the stem", replace(ok, "id = \"bad_gpu\"", "id = \"other\""), {"id", "stem"}},
      {"no dram", replace(ok, "dram = ", "# dram = "), {"memory.dram", "missing"}},
      {"no fp32", replace(ok, "fp32    = ", "# fp32 = "), {"compute.fp32", "missing"}},
      {"arch not sm_", replace(ok, "\"sm_90a\"", "\"hopper\""), {"arch", "hopper"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    HwTempDir dir;
    dir.write("good_gpu.toml", valid_toml("good_gpu"));  // a good neighbour does not hide the bad one
    const auto bad = dir.write("bad_gpu.toml", c.text);
    try {
      load_hardware(dir.path());
      ADD_FAILURE() << "no HardwareError for: " << c.what;
    } catch (const HardwareError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(bad.string()), std::string::npos) << msg;
      for (const auto& s : c.expect) EXPECT_NE(msg.find(s), std::string::npos) << "'" << s << "' not in: " << msg;
    }
  }
}

TEST(Hardware, MissingDirectoryIsAHardwareError) {
  HwTempDir dir;
  EXPECT_THROW(load_hardware(dir.path() / "absent"), HardwareError);
  EXPECT_TRUE(load_hardware(dir.path()).empty());  // an empty directory is simply no hardware
}

TEST(Ceilings, MissingKeyNamesTheKeyAndTheKeysPresent) {
  HwTempDir dir;
  dir.write("test_gpu.toml", valid_toml("test_gpu"));
  const Ceilings c = load_hardware(dir.path())[0].ceilings;
  try {
    c.compute_peak("fp8_tc");
    ADD_FAILURE() << "no exception";
  } catch (const std::out_of_range& e) {
    const std::string msg = e.what();
    for (const char* s : {"fp8_tc", "bf16_tc", "fp32", "int8_tc", "test_gpu"})
      EXPECT_NE(msg.find(s), std::string::npos) << s << " not in: " << msg;
  }
  EXPECT_THROW(c.memory_peak("hbm"), std::out_of_range);
}

TEST(Ceilings, JsonRoundTripsAndRejectsBadDocuments) {
  const Ceilings h100 = spec_by_id(load_hardware(hardware_dir()), "h100_sxm").ceilings;
  const Ceilings back = ceilings_from_json(nlohmann::json::parse(to_json(h100).dump()));
  EXPECT_EQ(back.id, h100.id);
  EXPECT_EQ(back.name, h100.name);
  EXPECT_EQ(back.measured, h100.measured);
  ASSERT_EQ(back.compute.size(), h100.compute.size());
  for (const auto& [k, v] : h100.compute) {
    EXPECT_EQ(back.compute.at(k).value, v.value) << k;  // exact: JSON doubles round-trip
    EXPECT_EQ(back.compute.at(k).source, v.source) << k;
  }
  EXPECT_EQ(back.memory.at("dram").value, h100.memory.at("dram").value);

  nlohmann::json j = to_json(h100);
  j["compute"]["fp32"]["value"] = -1;
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
  j = to_json(h100);
  j["memory"]["dram"].erase("source");
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
  EXPECT_THROW(ceilings_from_json(nlohmann::json::array()), std::runtime_error);
  EXPECT_THROW(ceilings_from_json(nlohmann::json{{"id", "x"}}), std::runtime_error);
}

}  // namespace
}  // namespace kb
