// The kbench command line as a user meets it: listings, and bad input answered with exit code 2
// and a message naming the file, key or value at fault.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/safetensors.h"
#include "core/subprocess.h"
#include "cli_test_util.h"
#include "scratch_dir.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "eval/expected.h"
#include "worker/sampling.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

TEST(Cli, ListJsonHoldsTheExampleProblemWithItsShapes) {
  auto r = kbench({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  auto it = std::find_if(j.begin(), j.end(), [](const auto& p) { return p["name"] == "softmax"; });
  ASSERT_NE(it, j.end());
  EXPECT_EQ((*it)["regime"], "memory");
  EXPECT_EQ((*it)["shapes"].size(), 4u);
  EXPECT_EQ((*it)["shapes"][0]["bytes"], 4.0 * 2 * 64 * 1024);
}

TEST(Cli, ShowPrintsTheSpecReadably) {
  auto r = kbench({"show", "softmax"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rtol=0.001"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch=4 vocab=131072"), std::string::npos) << r.output;
}

// The baseline line: the problem's description of its reference line where the folder has one,
// "none" where it has none; the JSON has it as an object or null.
TEST(Cli, ShowNamesTheBaselineOrNone) {
  auto with = kbench({"show", "l4_int4_gemm"});
  ASSERT_EQ(with.exit_code, 0) << with.output;
  EXPECT_NE(with.output.find("baseline (cuda): weights dequantised to fp16"), std::string::npos) << with.output;
  EXPECT_NE(with.output.find("[links cublasLt]"), std::string::npos) << with.output;
  auto without = kbench({"show", "kda"});
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_NE(without.output.find("baseline: none"), std::string::npos) << without.output;
  auto list = kbench({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const auto j = nlohmann::json::parse(list.output);
  for (const auto& p : j) {
    if (p["name"] == "kda") {
      EXPECT_TRUE(p["baseline"].is_null());
    }
    if (p["name"] == "moe_swiglu") {
      EXPECT_EQ(p["baseline"]["libraries"], nlohmann::json::array({"cublas"}));
      EXPECT_TRUE(p["baseline"]["synchronizes"].get<bool>());
    }
  }
}

TEST(Cli, UnknownProblemIsAUsageErrorNamingTheKnownOnes) {
  auto r = kbench({"show", "no_such_problem"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no problem 'no_such_problem'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("softmax"), std::string::npos) << r.output;
}

TEST(Cli, MissingSolutionFolderIsAUsageError) {
  auto r = kbench({"check", "softmax", "/nonexistent/solution"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/solution"), std::string::npos) << r.output;
}

TEST(Cli, MalformedProblemTomlNamesFileAndKey) {
  const fs::path deck = fs::temp_directory_path() / "kbench-cli-bad-deck";
  fs::remove_all(deck);
  fs::create_directories(deck / "softmax");
  std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/problem.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), {});
  toml.replace(toml.find("dtype = \"f32\""), 13, "dtype = \"f33\"");
  std::ofstream(deck / "softmax/problem.toml") << toml;
  auto r = kbench({"show", "softmax", "--problems", deck.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("problem.toml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("inputs[0].dtype"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("f33"), std::string::npos) << r.output;
  fs::remove_all(deck);
}

TEST(Cli, UnknownTargetIsAUsageError) {
  auto r = kbench({"check", "softmax", std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive",
                   "--target", "tpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown target 'tpu'"), std::string::npos) << r.output;
}

TEST(Cli, HostCeilingsArePositive) {
  auto r = kbench({"ceilings", "--target", "host", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_TRUE(j["measured"].get<bool>());
  EXPECT_GT(j["memory"]["dram"]["value"].get<double>(), 1e8);
  EXPECT_GT(j["compute"]["fp32"]["value"].get<double>(), 1e8);
}

// The cuda target's timing knobs reach the policy the worker times under, and result.json says so.
TEST(Cli, TheTimingKnobsAreRecordedInTheResultsPolicy) {
  const std::string solution = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive";
  auto r = kbench({"bench", "softmax", solution, "--target", "host", "--shape", "0", "--no-baseline", "--max-time", "0.2",
                   "--no-hot-capture", "--no-blocking-kernel", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["timing_policy"]["hot_capture"], false) << j["timing_policy"].dump();
  EXPECT_EQ(j["timing_policy"]["blocking_kernel"], false) << j["timing_policy"].dump();
}

// Where a verdict's time went: the preparation by step, the worker's by request; each part
// measured, together no more than the whole.
TEST(Cli, TheVerdictsTimeIsSplitByStepAndTheWorkersByRequest) {
  const std::string solution = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive";
  auto r = kbench({"bench", "softmax", solution, "--target", "host", "--shape", "0", "--no-baseline", "--max-time", "0.2",
                   "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const auto& sec = j["shapes"][0]["seconds"];
  double parts = 0;
  for (const char* k : {"timing", "confirmation"}) {
    EXPECT_GT(sec[k].get<double>(), 0) << k << ": " << sec.dump();
    parts += sec[k].get<double>();
  }
  for (const char* k : {"checks", "repeats"}) parts += sec[k].get<double>();  // bench checks nothing
  EXPECT_LE(parts, sec["worker"].get<double>() + 1e-9) << sec.dump();
  EXPECT_GE(sec["timing"].get<double>(), j["shapes"][0]["timing"]["wall_seconds"].get<double>()) << sec.dump();
  // And the time before the first shape, by step: the device was opened and the library built or found.
  const auto& prep = j["preparation_seconds"];
  EXPECT_GT(prep["device"].get<double>(), 0) << prep.dump();
  EXPECT_GT(prep["build"].get<double>(), 0) << prep.dump();
  EXPECT_LE(prep["build"].get<double>() + prep["device"].get<double>(), j["duration_seconds"].get<double>()) << prep.dump();
}

// --steady-floor on the host (where a Python solution's cuda scoring cannot run in CI): the worker
// measures the steady batches, the parent floors the samples with them and records both.
TEST(Cli, TheSteadyFloorIsMeasuredAppliedAndRecorded) {
  const std::string solution = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive";
  auto r = kbench({"bench", "softmax", solution, "--target", "host", "--shape", "0", "--no-baseline", "--max-time", "0.2",
                   "--steady-floor", "--json", "--samples"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["timing_policy"]["steady_floor"], true) << j["timing_policy"].dump();
  const auto& t = j["shapes"][0]["timing"];
  ASSERT_TRUE(t.contains("steady")) << t.dump();
  const double steady = t["steady"]["seconds"].get<double>();
  EXPECT_GT(steady, 0);
  EXPECT_EQ(t["steady"]["batch_seconds"].size(), static_cast<size_t>(kb::kSteadyBatches));
  EXPECT_GE(t["steady"]["calls"].get<size_t>(), kb::kSteadyMinCalls);
  // Each batch's figure is at least the host's own time per call over it.
  const auto batches = t["steady"]["batch_seconds"].get<std::vector<double>>();
  const auto host = t["steady"]["host_batch_seconds"].get<std::vector<double>>();
  ASSERT_EQ(host.size(), batches.size());
  for (size_t i = 0; i < host.size(); ++i) {
    EXPECT_GT(host[i], 0) << i;
    EXPECT_GE(batches[i], host[i]) << i;
  }
  const auto samples = t["samples"].get<std::vector<double>>();
  const auto cold = t["cold_samples"].get<std::vector<double>>();
  ASSERT_EQ(samples.size(), cold.size());
  for (size_t i = 0; i < samples.size(); ++i) EXPECT_DOUBLE_EQ(samples[i], std::max(cold[i], steady)) << i;
  // The verdict names it, beside the cold median (the GPU's on cuda, here the host's).
  auto text = kbench({"bench", "softmax", solution, "--target", "host", "--shape", "0", "--no-baseline", "--max-time",
                      "0.2", "--steady-floor"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("  steady   calls back to back with their launches"), std::string::npos) << text.output;
  EXPECT_EQ(kbench({"bench", "softmax", solution, "--target", "host", "--shape", "0", "--no-baseline", "--json"})
                .output.find("\"steady\":"),
            std::string::npos);
}

TEST(Cli, ShowNamesTheComparatorOfTopkIndices) {
  auto r = kbench({"show", "topk"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("comparator: topk_indices"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ties across the k-th value"), std::string::npos) << r.output;
}

// `kbench dump`: the file holds the case's inputs as kbench draws them and the oracle's values.
TEST(Cli, DumpWritesTheCaseAsSafetensors) {
  const fs::path out = fs::temp_directory_path() / ("kbench-dump-" + std::to_string(getpid()) + ".safetensors");
  auto r = kbench({"dump", "topk", "--shape", "4", "--seed", "7", "--out", out.string()});  // batch 128, n 4096, k 1
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const kb::SafetensorsFile f = kb::read_safetensors(out);
  EXPECT_EQ(f.metadata.at("problem"), "topk");
  EXPECT_EQ(f.metadata.at("shape"), "4");
  EXPECT_EQ(f.metadata.at("seed"), "7");
  EXPECT_EQ(f.metadata.at("weights_seed"), "7");
  EXPECT_EQ(f.metadata.at("rows"), "all");
  EXPECT_EQ(f.metadata.at("comparators"), "indices:topk_indices");
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.tensors[0].name, "x");
  EXPECT_EQ(f.tensors[1].name, "expected.values");
  EXPECT_EQ(f.tensors[2].name, "expected.indices");
  EXPECT_EQ(f.tensors[2].dtype, kb::DType::f64);
  EXPECT_EQ(f.tensors[2].shape, (std::vector<int64_t>{128, 1}));
  // x is exactly what the evaluator draws for seed 7; k = 1: the expected value is each row's max.
  const kb::Problem p = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/topk");
  const kb::HostTensor x = kb::generate_inputs(p, p.shapes[4], 7).at(0);
  EXPECT_EQ(f.tensors[0].bytes, x.bytes);
  const auto* values = reinterpret_cast<const double*>(f.tensors[1].bytes.data());
  const auto* indices = reinterpret_cast<const double*>(f.tensors[2].bytes.data());
  for (int64_t row = 0; row < 128; ++row) {
    double best = -INFINITY;
    for (int64_t j = 0; j < 4096; ++j) best = std::max(best, x.get(row * 4096 + j));
    EXPECT_EQ(values[row], best) << row;
    EXPECT_EQ(x.get(row * 4096 + static_cast<int64_t>(indices[row])), best) << row;
  }
  fs::remove(out);
}

// --rows: the expected outputs of the rows asked for only, with their indices (a tensor and the
// metadata), so that a few rows of a large shape are a small file; inputs and weights whole, the
// weights from their own seed. Read back and compared with what the evaluator draws and computes.
TEST(Cli, DumpRowsWritesOnlyTheRowsAskedForAndEveryInputAndWeightWhole) {
  const fs::path out = fs::temp_directory_path() / ("kbench-dump-rows-" + std::to_string(getpid()) + ".safetensors");
  // fp8_gemm shape 0: M = N = K = 4096; x and w are 16 MiB each, a whole expected y 128 MiB.
  auto r = kbench({"dump", "fp8_gemm", "--shape", "0", "--seed", "2", "--weights-seed", "9", "--rows", "3,1,3",
                   "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const kb::SafetensorsFile f = kb::read_safetensors(out);
  EXPECT_EQ(f.metadata.at("rows"), "1,3");
  EXPECT_EQ(f.metadata.at("weights_seed"), "9");

  const kb::Problem p = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/fp8_gemm");
  const kb::ShapeCase& shape = p.shapes[0];
  const auto inputs = kb::generate_inputs(p, shape, 2);
  const auto weights = kb::generate_weights(p, shape, 9);
  std::map<std::string, const kb::SafetensorsTensor*> by_name;
  for (const auto& t : f.tensors) by_name[t.name] = &t;
  ASSERT_EQ(weights.size(), 2u);  // w and sw
  ASSERT_EQ(f.tensors.size(), inputs.size() + weights.size() + 2) << "inputs, weights, expected.y, expected.row_index";
  uint64_t whole = 0;
  for (const auto* set : {&inputs, &weights})
    for (const auto& t : *set) {
      ASSERT_TRUE(by_name.count(t.name)) << t.name;
      EXPECT_EQ(by_name[t.name]->shape, t.shape) << t.name;
      EXPECT_EQ(by_name[t.name]->bytes, t.bytes) << t.name;
      whole += t.bytes.size();
    }
  ASSERT_TRUE(by_name.count("expected.row_index"));
  const auto& index = *by_name["expected.row_index"];
  EXPECT_EQ(index.dtype, kb::DType::i64);
  ASSERT_EQ(index.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(reinterpret_cast<const int64_t*>(index.bytes.data())[0], 1);
  EXPECT_EQ(reinterpret_cast<const int64_t*>(index.bytes.data())[1], 3);

  // expected.y holds rows 1 and 3 of the oracle's y, in that order, and nothing else.
  ASSERT_TRUE(by_name.count("expected.y"));
  const auto& y = *by_name["expected.y"];
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 4096}));
  const auto oracle = kb::oracle_outputs(p, shape, inputs, weights, {1, 3}).at(0);
  const auto* got = reinterpret_cast<const double*>(y.bytes.data());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t n = 0; n < 4096; ++n) {
      const double want = oracle[static_cast<size_t>((i == 0 ? 1 : 3) * 4096 + n)];
      ASSERT_FALSE(std::isnan(want));
      ASSERT_EQ(got[i * 4096 + n], want) << "row " << i << " column " << n;
    }
  // The file: the inputs and weights, 2 rows of expected values and a small header; not the 128 MiB
  // of a whole expected y.
  EXPECT_LT(fs::file_size(out), whole + 2 * 4096 * 8 + 64 * 1024);
  fs::remove(out);
}

TEST(Cli, DumpErrorsNameTheBadArgument) {
  const std::string out = (fs::temp_directory_path() / "kbench-dump-bad.safetensors").string();
  auto shape = kbench({"dump", "topk", "--shape", "99", "--out", out});
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.output.find("--shape 99: out of range: topk has 11 shapes"), std::string::npos) << shape.output;
  auto rows = kbench({"dump", "topk", "--rows", "5", "--out", out});  // shape 0 has one row
  EXPECT_EQ(rows.exit_code, 2);
  EXPECT_NE(rows.output.find("--rows 5: out of range"), std::string::npos) << rows.output;
  auto ext = kbench({"dump", "topk", "--out", "/tmp/case.bin"});
  EXPECT_EQ(ext.exit_code, 2);
  EXPECT_NE(ext.output.find("--out /tmp/case.bin: expected a file name ending in .safetensors"), std::string::npos)
      << ext.output;
  auto dir = kbench({"dump", "topk", "--out", "/nonexistent/dir/case.safetensors"});
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_NE(dir.output.find("the folder /nonexistent/dir does not exist"), std::string::npos) << dir.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace

// `kbench build` compiles a solution into the build cache exactly as check/bench/eval would: the
// second build and the check after it find it there; a compile error is exit 1 with the compiler's
// words, a bad folder exit 2 naming it.
TEST(Cli, BuildCompilesIntoTheCacheThatCheckUses) {
  const fs::path cache = kb::test::scratch_dir("build-cache");
  setenv("KBENCH_CACHE_DIR", cache.c_str(), 1);
  const std::string solutions = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/";
  auto first = kbench({"build", "softmax", solutions + "host-naive", "--target", "host", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto j1 = nlohmann::json::parse(first.output.substr(first.output.find('{')));
  EXPECT_TRUE(j1["ok"].get<bool>());
  EXPECT_FALSE(j1["cached"].get<bool>());
  const fs::path library = j1["library"].get<std::string>();
  EXPECT_TRUE(fs::is_regular_file(library)) << library;
  EXPECT_EQ(library.string().rfind((cache / "build").string(), 0), 0u) << library << " is not under " << cache;

  auto second = kbench({"build", "softmax", solutions + "host-naive", "--target", "host", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const auto j2 = nlohmann::json::parse(second.output.substr(second.output.find('{')));
  EXPECT_TRUE(j2["cached"].get<bool>());
  EXPECT_EQ(j2["library"], j1["library"]);

  auto check = kbench({"check", "softmax", solutions + "host-naive", "--target", "host", "--shape", "0", "--json",
                       "--out", (cache / "check").string()});
  ASSERT_EQ(check.exit_code, 0) << check.output;
  const auto jc = nlohmann::json::parse(check.output.substr(check.output.find('{')));
  EXPECT_TRUE(jc["build"]["cached"].get<bool>()) << jc["build"].dump();
  EXPECT_EQ(jc["build"]["library"], j1["library"]);

  auto broken = kbench({"build", "softmax", solutions + "bad-host-compile-error", "--target", "host"});
  EXPECT_EQ(broken.exit_code, 1) << broken.output;
  EXPECT_NE(broken.output.find("build FAILED"), std::string::npos) << broken.output;
  EXPECT_NE(broken.output.find("error:"), std::string::npos) << broken.output;

  auto missing = kbench({"build", "softmax", "/nonexistent/solution", "--target", "host"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/solution"), std::string::npos) << missing.output;
  fs::remove_all(cache);
}

// The public seeds' expected outputs are computed once and then read from kbench's cache (the
// second check reads its 3 fixed seeds' there; its secret seed is computed, as always), unless
// --no-expected-cache; a changed problem is another key, so its first check computes them again.
TEST(Cli, ThePublicSeedsExpectedOutputsAreCachedAndAChangedProblemIsNotServedFromIt) {
  const fs::path cache = kb::test::scratch_dir("expected-cache");
  setenv("KBENCH_CACHE_DIR", cache.c_str(), 1);
  const std::string solution = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive";
  auto cached = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"check", "softmax", solution, "--target", "host", "--shape", "0", "--json",
                                     "--out", (cache / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = kbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    EXPECT_EQ(j["verdict"], "pass") << r.output;
    EXPECT_EQ(j["shapes"][0]["checks"].size(), 4u) << r.output;
    return j["shapes"][0]["expected_cached"].get<int>();
  };
  EXPECT_EQ(cached({}), 0) << "nothing cached yet";
  EXPECT_EQ(cached({}), 3) << "the 3 fixed seeds from the cache, the secret one computed";
  EXPECT_EQ(cached({"--no-expected-cache"}), 0);
  // A copy of the deck's softmax with one more comment in problem.toml: another problem to the cache.
  const fs::path deck = cache / "deck";
  fs::create_directories(deck / "softmax");
  for (const auto& e : fs::directory_iterator(std::string(KBENCH_SOURCE_DIR) + "/problems/softmax"))
    if (e.path().filename() != "solutions") fs::copy(e.path(), deck / "softmax" / e.path().filename(), fs::copy_options::recursive);
  std::ofstream(deck / "softmax" / "problem.toml", std::ios::app) << "\n# a changed problem\n";
  EXPECT_EQ(cached({"--problems", deck.string()}), 0);
  EXPECT_EQ(cached({"--problems", deck.string()}), 3);
  fs::remove_all(cache);
}
