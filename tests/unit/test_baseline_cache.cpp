// The baseline's cache (eval/baseline_cache.h): a stored baseline is found again under the same key,
// every input that can change its record changes the key, a damaged file is a miss, and a record
// read back is written out exactly as it was (eval_result_from_json, eval/result.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/json_text.h"
#include "deck/problem.h"
#include "eval/baseline_cache.h"
#include "eval/result.h"
#include "test_support.h"

namespace kb {
namespace {

namespace fs = std::filesystem;
using testing_support::ScopedEnv;
using testing_support::TempDir;

const fs::path kSoftmax = fs::path(KBENCH_SOURCE_DIR) / "problems" / "softmax";

void append(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::app) << text;
}

// A copy of the deck's softmax (its solutions left out) that a test may edit, and a cache folder of
// its own; the key's inputs other than the problem are fixed here and varied by the tests.
class BaselineCacheTest : public testing::Test {
 protected:
  BaselineCacheTest() : env_("KBENCH_CACHE_DIR", cache_.path().string()) {
    testing_support::copy_problem_without_solutions(kSoftmax, problem_dir());
    fs::create_directories(problem_dir() / "solutions" / "one");
    std::ofstream(problem_dir() / "solutions" / "one" / "solution.cpp") << "// a solution\n";
  }
  fs::path problem_dir() const { return work_.path() / "softmax"; }
  Problem problem() const { return load_problem(problem_dir()); }
  std::string key(const std::string& version = "1.2.3", const std::string& device = "host | machine A",
                  const EvalOptions& o = {}) const {
    return baseline_cache_key(problem(), "host", device, version, o);
  }

  TempDir work_{"baseline-cache-problem"};
  TempDir cache_{"baseline-cache"};
  ScopedEnv env_;
};

// A passing baseline record with every kind of field to_json writes: optional figures present and
// absent, non-finite errors, SASS facts, GPU work, an annotation.
EvalResult sample_baseline() {
  EvalResult r;
  r.mode = "eval";
  r.problem = "softmax";
  r.target = "cuda";
  r.device = "NVIDIA H100 80GB HBM3";
  r.solution_dir = "/deck/softmax/baseline.cu";
  r.finding = {};
  r.build = BuildRecord{true, true, 0.25, "nvcc -O3 solution.cu", "/cache/build/abc/libsolution.so", ""};
  r.sandbox.enabled = true;
  r.sandbox.version = "bubblewrap 0.8.0";
  r.sandbox.write_xor_execute = false;  // as a baseline runs (evaluator.cpp, baseline_options)
  SassReport sass;
  sass.available = true;
  sass.tool = "/usr/local/cuda/bin/cuobjdump";
  sass.listing.archs = {"sm_90a"};
  SassKernel k;
  k.name = "_Z7softmaxPKfPfi";
  k.demangled = "softmax(float const*, float*, int)";
  k.arch = "sm_90a";
  k.instructions = 420;
  k.classes = {{"HGMMA", 8}, {"UTMALDG", 2}, {"STL", 3}, {"FFMA", 100}};
  k.evidence = {"0060: HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ"};
  k.registers = 64;
  k.shared_bytes = 1024;
  sass.listing.kernels.push_back(k);
  SassKernel triton;  // a Python solution's kernel, with where its function is defined
  triton.name = "softmax_rows";
  triton.arch = "sm_90a";
  triton.instructions = 300;
  triton.source_file = "softmax_triton.py";
  triton.source_line = 21;
  sass.listing.kernels.push_back(triton);
  RequiredInstructions req;
  req.arch = "sm_90a";
  req.key = "sm_90a";
  req.classes = {"HGMMA"};
  req.found = {"HGMMA"};
  req.tensor_core_found = {{"HGMMA", 8}};
  sass.required.push_back(req);
  r.sass = sass;
  for (size_t i = 0; i < 2; ++i) {
    ShapeResult s;
    s.index = i;
    s.label = "batch=64, vocab=1024";
    s.dims = {{"batch", 64}, {"vocab", 1024 << i}};
    s.pass = true;
    SeedCheck c;
    c.seed = 18446744073709551615ull;  // the largest seed survives as an integer
    c.secret = true;
    c.pass = true;
    c.seconds = 0.001;
    OutputVerdict v;
    v.output = "y";
    v.checked = 65536;
    v.max_abs_err = 1e-7;
    v.max_rel_err = std::numeric_limits<double>::infinity();
    v.max_ulp_err = std::nan("");
    v.rel_l2 = 1.0 / 3;
    ElementError e;
    e.coords = {3, 7};
    e.expected = 0.25;
    e.got = std::nan("");
    e.abs_err = std::numeric_limits<double>::infinity();
    v.worst.push_back(e);
    c.outputs.push_back(v);
    s.checks.push_back(c);
    s.flops = 5.0 * 64 * 1024;
    s.bytes = 8.0 * 64 * 1024;
    if (i == 0) {
      TimingRecord t;
      t.samples = {1.5e-5, 1.25e-5, 1.75e-5};
      t.seconds = summarize(t.samples);
      t.event_samples = {1.4e-5, 1.2e-5, 1.7e-5};
      t.host_call_samples = {3e-6, 2.5e-6, 4e-6};
      t.warmup_calls = 12;
      t.stop_reason = "noise";
      t.wall_seconds = 0.5;
      t.sm_clock_median_mhz = 1980;
      t.max_sm_clock_mhz = 1980;
      t.hot_seconds = 1.1e-5;
      t.hot_calls = 180;
      t.hot_mode = "graph";
      t.tail_checks = nlohmann::json::array({{{"seconds", 1e-5}}});
      t.span_samples = 1;
      s.timing = t;
      RooflinePoint p;
      p.flops = s.flops;
      p.bytes = s.bytes;
      p.seconds = 1.5e-5;
      p.flops_per_s = p.flops / p.seconds;
      p.bytes_per_s = p.bytes / p.seconds;
      p.compute_peak = 6.69e13;
      p.memory_peak = 3.35e12;
      p.compute_fraction = p.flops_per_s / p.compute_peak;
      p.memory_fraction = p.bytes_per_s / p.memory_peak;
      p.peak_fraction = p.memory_fraction;
      p.sol_fraction = p.memory_fraction;
      s.roofline = p;
      s.gpu_work = {{"kernels", 2}, {"outside_calls", 0}};
    }
    s.seconds = {0.1, 0.2, 0.3, 0.01, 0.61};
    s.seconds.checks = 0.11, s.seconds.repeats = 0.04, s.seconds.timing = 0.12, s.seconds.confirmation = 0.02;
    s.call_timeout_seconds = 5.016;
    r.shapes.push_back(s);
  }
  r.shapes_not_judged = {2, 3};
  r.peak_fraction_geomean = 0.42;
  r.regime = "memory";
  r.compute_peak_key = "fp32";
  r.memory_peak_key = "dram";
  r.compute_peak = 6.69e13;
  r.memory_peak = 3.35e12;
  r.ceilings_id = "h100-sxm";
  r.timing_policy.max_seconds = 1.5;
  r.timing_policy.hot_capture = false;
  r.kbench_version = "1.2.3";
  r.started_at = "2026-11-27T08:00:00Z";
  r.duration_seconds = 14.8;
  r.preparation_seconds.device = 0.4, r.preparation_seconds.sass = 0.7;
  Annotation a;
  a.verdict = "clean";
  a.summary = "the baseline";
  a.evidence.push_back(Evidence{"source", "solution.cu", 12, "", "cudnnSoftmaxForward(...)", "the vendor call"});
  r.annotation = a;
  return r;
}

TEST(EvalResultJson, ReadingBackWritesTheSameDocument) {
  const EvalResult r = sample_baseline();
  const nlohmann::json written = to_json(r, /*with_samples=*/true);
  const EvalResult back = eval_result_from_json(written);
  EXPECT_EQ(json_text(to_json(back, true)), json_text(written));
  // What the verdict table reads is there as a record, not only as text.
  ASSERT_TRUE(back.shapes[0].timing);
  EXPECT_DOUBLE_EQ(back.shapes[0].timing->seconds.median, r.shapes[0].timing->seconds.median);
  ASSERT_TRUE(back.shapes[0].roofline);
  EXPECT_DOUBLE_EQ(back.shapes[0].roofline->peak_fraction, r.shapes[0].roofline->peak_fraction);
  EXPECT_EQ(back.shapes[0].timing->host_call_samples, r.shapes[0].timing->host_call_samples);
  EXPECT_DOUBLE_EQ(written["shapes"][0]["timing"]["host_call"]["median"].get<double>(), 3e-6);
  EXPECT_FALSE(back.shapes[1].timing);
  EXPECT_TRUE(std::isnan(back.shapes[0].checks[0].outputs[0].max_ulp_err));
  EXPECT_EQ(back.shapes[0].checks[0].seed, 18446744073709551615ull);
  EXPECT_EQ(back.verdict(), Verdict::pass);
  EXPECT_DOUBLE_EQ(back.shapes[0].seconds.timing, 0.12);
  EXPECT_DOUBLE_EQ(written["shapes"][0]["seconds"]["repeats"].get<double>(), 0.04);
  // A record written before the worker's time was split by request reads back with the parts at 0.
  nlohmann::json older = written;
  for (const char* k : {"checks", "repeats", "timing", "confirmation"}) older["shapes"][0]["seconds"].erase(k);
  const EvalResult old_back = eval_result_from_json(older);
  EXPECT_DOUBLE_EQ(old_back.shapes[0].seconds.checks, 0.0);
  EXPECT_DOUBLE_EQ(old_back.shapes[0].seconds.worker, 0.3);
  EXPECT_DOUBLE_EQ(back.preparation_seconds.sass, 0.7);
  EXPECT_DOUBLE_EQ(written["preparation_seconds"]["device"].get<double>(), 0.4);
  older.erase("preparation_seconds");
  EXPECT_DOUBLE_EQ(eval_result_from_json(older).preparation_seconds.device, 0.0);
  // A nested baseline, as result.json holds one, comes back as well.
  EvalResult outer = r;
  outer.baseline = std::make_shared<EvalResult>(r);
  outer.baseline_description = "cuDNN";
  EXPECT_EQ(json_text(to_json(eval_result_from_json(to_json(outer)))), json_text(to_json(outer)));
}

// A Python solution's record on cuda: the steady floor's figure and the cold samples before it.
TEST(EvalResultJson, TheSteadyFloorsRecordComesBack) {
  EvalResult r = sample_baseline();
  r.timing_policy.steady_floor = true;
  TimingRecord& t = *r.shapes[0].timing;
  t.cold_samples = {4.6e-6, 4.7e-6, 4.9e-6};
  t.steady = SteadyRecord{1.3e-5, 114, {1.2e-5, 1.3e-5, 1.4e-5}, {1.1e-5, 1.3e-5, 1.2e-5}};
  t.samples = steady_floored(t.cold_samples, t.steady->seconds);
  t.seconds = summarize(t.samples);
  const nlohmann::json written = to_json(r, /*with_samples=*/true);
  EXPECT_DOUBLE_EQ(written["shapes"][0]["timing"]["steady"]["cold_median"].get<double>(), 4.7e-6);
  EXPECT_TRUE(written["timing_policy"]["steady_floor"].get<bool>());
  const EvalResult back = eval_result_from_json(written);
  EXPECT_EQ(json_text(to_json(back, true)), json_text(written));
  ASSERT_TRUE(back.shapes[0].timing->steady);
  EXPECT_EQ(back.shapes[0].timing->steady->calls, 114u);
  EXPECT_EQ(back.shapes[0].timing->cold_samples, t.cold_samples);
}

TEST(EvalResultJson, AFailureReasonComesBack) {
  EvalResult r = sample_baseline();
  r.finding = Finding(Reason::timeout, "shape 0: the call did not return");
  r.shapes[0].pass = false;
  r.shapes[0].finding = Finding(Reason::timeout, "the call did not return");
  const EvalResult back = eval_result_from_json(to_json(r));
  EXPECT_EQ(back.finding.reason, Reason::timeout);
  EXPECT_EQ(back.verdict(), r.verdict());
  EXPECT_EQ(json_text(to_json(back)), json_text(to_json(r)));
}

// The W^X record (docs/threat-model.md, guarantee 7) comes back as written, and a result written
// before the field existed reads what held then: W^X on wherever the filter was, on the host target
// only.
TEST(EvalResultJson, TheWriteXorExecuteRecordComesBack) {
  EvalResult r = sample_baseline();
  for (bool wx : {false, true}) {
    r.sandbox.write_xor_execute = wx;
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["sandbox"]["write_xor_execute"], wx);
    EXPECT_EQ(eval_result_from_json(j).sandbox.write_xor_execute, wx);
  }
  nlohmann::json old = to_json(r);
  old["sandbox"].erase("write_xor_execute");
  for (const char* target : {"host", "cuda"})
    for (bool seccomp : {false, true}) {
      old["target"] = target;
      old["sandbox"]["seccomp"] = seccomp;
      EXPECT_EQ(eval_result_from_json(old).sandbox.write_xor_execute, seccomp && std::string(target) == "host")
          << target << ", seccomp " << seccomp;
    }
}

TEST(EvalResultJson, ADocumentThatIsNotARecordThrows) {
  EXPECT_ANY_THROW(eval_result_from_json(nlohmann::json::object()));
  nlohmann::json j = to_json(sample_baseline());
  j["shapes"][0].erase("timing");
  EXPECT_ANY_THROW(eval_result_from_json(j));
  j = to_json(sample_baseline());
  j["failure"] = "no_such_reason";
  EXPECT_ANY_THROW(eval_result_from_json(j));
}

TEST_F(BaselineCacheTest, AStoredBaselineIsFoundUnderItsKey) {
  const std::string k = key();
  const fs::path file = baseline_cache_file(k);
  EXPECT_EQ(file.parent_path(), cache_.path() / "baselines");
  EXPECT_FALSE(read_cached_baseline(file, k));
  const EvalResult r = sample_baseline();
  ASSERT_TRUE(write_cached_baseline(file, k, r));
  const auto hit = read_cached_baseline(file, k);
  ASSERT_TRUE(hit);
  EXPECT_EQ(json_text(to_json(*hit)), json_text(to_json(r)));
  // The same inputs make the same key; the key is a file name.
  EXPECT_EQ(key(), k);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k.size(), 32u);
  // A file read under another key (renamed, or a collision of names) is not used.
  EXPECT_FALSE(read_cached_baseline(file, key("9.9.9")));
}

TEST_F(BaselineCacheTest, ChangingTheProblemTomlMisses) {
  const std::string before = key();
  append(problem_dir() / "problem.toml", "\n# a comment is a change too\n");
  EXPECT_NE(key(), before);
}

TEST_F(BaselineCacheTest, ChangingTheBaselineSourceMisses) {
  const std::string before = key();
  append(problem_dir() / "baseline.cu", "\n// edited\n");
  EXPECT_NE(key(), before);
}

TEST_F(BaselineCacheTest, ChangingTheOracleOrTheKitMisses) {
  const std::string before = key();
  append(problem_dir() / "reference.cpp", "\n// edited\n");
  const std::string after_oracle = key();
  EXPECT_NE(after_oracle, before);
  append(problem_dir() / "kit" / "softmax_rows.h", "\n// edited\n");
  EXPECT_NE(key(), after_oracle);
}

TEST_F(BaselineCacheTest, ANewSolutionDoesNotMiss) {
  const std::string before = key();
  fs::create_directories(problem_dir() / "solutions" / "two");
  std::ofstream(problem_dir() / "solutions" / "two" / "solution.cpp") << "// another solution\n";
  append(problem_dir() / "solutions" / "one" / "solution.cpp", "// edited\n");
  EXPECT_EQ(key(), before);
}

TEST_F(BaselineCacheTest, ChangingKbenchsVersionMisses) { EXPECT_NE(key("1.2.4"), key("1.2.3")); }

TEST_F(BaselineCacheTest, ChangingTheDeviceFingerprintMisses) {
  EXPECT_NE(key("1.2.3", "cuda | GPU-aaaa | NVIDIA H100 | CUDA driver 13000"),
            key("1.2.3", "cuda | GPU-aaaa | NVIDIA H100 | CUDA driver 13010"));
  EXPECT_NE(key("1.2.3", "cuda | GPU-aaaa | NVIDIA H100 | CUDA driver 13000"),
            key("1.2.3", "cuda | GPU-bbbb | NVIDIA H100 | CUDA driver 13000"));
  EXPECT_NE(baseline_cache_key(problem(), "host", "d", "1", {}), baseline_cache_key(problem(), "cuda", "d", "1", {}));
}

TEST_F(BaselineCacheTest, ChangingTheTimingPolicyMisses) {
  const EvalOptions base;
  const std::string before = key("1.2.3", "d", base);
  auto differs = [&](auto edit) {
    EvalOptions o = base;
    edit(o);
    return key("1.2.3", "d", o) != before;
  };
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.max_seconds = 1.0; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.min_samples = 31; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.target_rel_stdev = 0.01; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.rechecks = 0; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.blocking_kernel = false; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.timing.perturb = false; }));
  // What is judged: the shapes, the seeds, the secret seeds, the race check, a fixed timeout.
  EXPECT_TRUE(differs([](EvalOptions& o) { o.shapes = {0}; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.seeds = {7}; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.secret = false; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.repeat_calls = 0; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.call_timeout = std::chrono::milliseconds(1000); }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.isolate = false; }));
  EXPECT_TRUE(differs([](EvalOptions& o) { o.write_xor_execute = false; }));
  // Not what is measured: where the logs go, and the times this very cache provides.
  EXPECT_FALSE(differs([](EvalOptions& o) { o.work_dir = "/elsewhere"; }));
  EXPECT_FALSE(differs([](EvalOptions& o) { o.expected_seconds[0] = 1e-5; }));
  EXPECT_FALSE(differs([](EvalOptions& o) { o.refresh_baseline = true; }));
}

TEST_F(BaselineCacheTest, ACorruptFileIsAMiss) {
  const std::string k = key();
  const fs::path file = baseline_cache_file(k);
  ASSERT_TRUE(write_cached_baseline(file, k, sample_baseline()));
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (const std::string& damaged : {text.substr(0, text.size() / 2), std::string("not json"), std::string(),
                                     std::string("{\"format\": 1, \"key\": \"" + k + "\", \"baseline\": {}}"),
                                     std::string("[1, 2, 3]")}) {
    std::ofstream(file, std::ios::trunc) << damaged;
    EXPECT_FALSE(read_cached_baseline(file, k)) << damaged.substr(0, 80);
  }
  // Another format version is not read either.
  nlohmann::json j = nlohmann::json::parse(text);
  j["format"] = kBaselineCacheFormat + 1;
  std::ofstream(file, std::ios::trunc) << j.dump();
  EXPECT_FALSE(read_cached_baseline(file, k));
}

TEST_F(BaselineCacheTest, AFailedBaselineIsNeverStoredNorRead) {
  const std::string k = key();
  const fs::path file = baseline_cache_file(k);
  EvalResult failed = sample_baseline();
  failed.finding = Finding(Reason::build_error, "does not compile");
  EXPECT_FALSE(write_cached_baseline(file, k, failed));
  EXPECT_FALSE(fs::exists(file));
  // Written by hand (or by an older kbench): still not used.
  const nlohmann::json j = {{"format", kBaselineCacheFormat}, {"key", k}, {"baseline", to_json(failed)}};
  std::ofstream(file) << j.dump();
  EXPECT_FALSE(read_cached_baseline(file, k));
}

TEST_F(BaselineCacheTest, AnUnwritableCacheIsNotAnError) {
  // The cache folder's place is taken by a file: nothing can be created under it.
  fs::create_directories(cache_.path());
  std::ofstream(cache_.path() / "baselines") << "a file, not a folder";
  const std::string k = key();
  EXPECT_FALSE(write_cached_baseline(baseline_cache_file(k), k, sample_baseline()));
  EXPECT_FALSE(read_cached_baseline(baseline_cache_file(k), k));
}

}  // namespace
}  // namespace kb
