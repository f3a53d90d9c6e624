#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "deck/problem.h"

namespace kb {
namespace {

namespace fs = std::filesystem;

// A valid problem, in parts so that a test can drop or reorder whole sections.
const std::string kHeader = R"toml(name = "softmax"
deck = "example"
description = "Row-wise softmax."
targets = ["host", "cuda"]
dims = ["batch", "vocab"]
)toml";
const std::string kTensors = R"toml(
[[inputs]]
name = "x"
dtype = "f32"
shape = ["batch", "vocab"]
init = { dist = "normal", mean = 0.5, std = 3.0 }

[[weights]]
name = "bias"
dtype = "bf16"
shape = ["vocab / 2", 2]
init = { dist = "uniform", low = -0.5, high = 0.5 }

[[outputs]]
name = "y"
dtype = "f32"
shape = ["batch", "vocab"]
tolerance = { atol = 1e-7, rtol = 1e-5, max_ulp = 8, rel_l2 = 1e-6, source = "fp32 sums" }

[[outputs]]
name = "top"
dtype = "int32"
shape = ["batch", "min(vocab, 4)"]
tolerance = { atol = 0 }
comparator = "topk_indices"
)toml";
const std::string kShapes = R"toml(
[[shapes]]
batch = 32
vocab = 4096
label = "small"
init.x = { dist = "generator", generator = "softmax_spikes", scale = 50, count = 3 }

[[shapes]]
batch = 8
vocab = 2
)toml";
const std::string kRest = R"toml(
[cost]
flops = "5 * batch * vocab"
bytes = "2 * 4 * batch * vocab"
regime = "memory"
compute_peak = "fp32"
memory_peak = "dram"

[seeds]
check = [1, 2, 3]
secret = 2

[policy]
allowed_libraries = ["cub"]
forbidden = ["cudnn", "torch::"]
required_instructions = { sm_90a = ["FFMA"] }
)toml";
const std::string kValid = kHeader + kTensors + kShapes + kRest;

// kValid with the one occurrence of `from` replaced by `to`.
std::string patch(std::string_view from, std::string_view to, std::string text = kValid) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "patch target not in the TOML: " << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "patch target not unique: " << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

class ProblemSpec : public ::testing::Test {
 protected:
  fs::path root_;

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("kbench_spec_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path write(const std::string& toml, const std::string& folder = "softmax") {
    fs::create_directories(root_ / folder);
    std::ofstream(root_ / folder / "problem.toml") << toml;
    return root_ / folder;
  }

  // Loads toml and checks that it is rejected with a message naming the file and every fragment
  // (the key path and the expectation).
  void expect_error(const std::string& toml, std::initializer_list<std::string_view> fragments,
                    const std::string& folder = "softmax") {
    const fs::path dir = write(toml, folder);
    try {
      load_problem(dir);
      ADD_FAILURE() << "accepted, but expected an error mentioning " << *fragments.begin();
    } catch (const SpecError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find((dir / "problem.toml").string()), std::string::npos) << "no file in: " << msg;
      for (auto f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
    }
  }
};

}  // namespace

TEST_F(ProblemSpec, ValidProblemLoadsEveryField) {
  const Problem p = load_problem(write(kValid));
  EXPECT_EQ(p.id, "softmax");
  EXPECT_EQ(p.name, "softmax");
  EXPECT_EQ(p.dir, root_ / "softmax");
  EXPECT_EQ(p.deck, "example");
  EXPECT_FALSE(p.level) << "no `level` key: not one of KernelBench v3's levels";
  EXPECT_EQ(p.description, "Row-wise softmax.");
  EXPECT_EQ(p.targets, (std::vector<std::string>{"host", "cuda"}));
  EXPECT_EQ(p.dims, (std::vector<std::string>{"batch", "vocab"}));

  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(p.inputs[0].name, "x");
  EXPECT_EQ(p.inputs[0].dtype, DType::f32);
  ASSERT_EQ(p.inputs[0].shape.size(), 2u);
  EXPECT_EQ(p.inputs[0].shape[1].text(), "vocab");
  EXPECT_EQ(p.inputs[0].init.kind, InitSpec::Kind::normal);
  EXPECT_EQ(p.inputs[0].init.mean, 0.5);
  EXPECT_EQ(p.inputs[0].init.std, 3.0);

  ASSERT_EQ(p.weights.size(), 1u);
  EXPECT_EQ(p.weights[0].dtype, DType::bf16);
  EXPECT_EQ(p.weights[0].init.kind, InitSpec::Kind::uniform);
  EXPECT_EQ(p.weights[0].init.low, -0.5);
  EXPECT_EQ(p.weights[0].init.high, 0.5);

  ASSERT_EQ(p.outputs.size(), 2u);
  const Tolerance& t = p.outputs[0].tolerance;
  EXPECT_EQ(t.atol, 1e-7);
  EXPECT_EQ(t.rtol, 1e-5);
  EXPECT_EQ(t.max_ulp, 8.0);
  EXPECT_EQ(t.rel_l2, 1e-6);
  EXPECT_EQ(t.source, "fp32 sums");
  EXPECT_TRUE(p.outputs[0].comparator.empty());
  EXPECT_EQ(p.outputs[1].dtype, DType::i32);
  EXPECT_EQ(p.outputs[1].tolerance.atol, 0.0);
  EXPECT_FALSE(p.outputs[1].tolerance.rtol.has_value());
  EXPECT_EQ(p.outputs[1].comparator, "topk_indices");

  ASSERT_EQ(p.shapes.size(), 2u);
  EXPECT_EQ(p.shapes[0].label, "small");
  EXPECT_EQ(p.shapes[0].dims, (std::vector<int64_t>{32, 4096}));
  const InitSpec& spikes = p.shapes[0].init.at("x");
  EXPECT_EQ(spikes.kind, InitSpec::Kind::generator);
  EXPECT_EQ(spikes.generator, "softmax_spikes");
  EXPECT_EQ(spikes.params, (std::map<std::string, double>{{"count", 3}, {"scale", 50}}));
  EXPECT_TRUE(p.shapes[1].init.empty());

  EXPECT_EQ(p.flops.eval(p.variables(p.shapes[0])), 5.0 * 32 * 4096);
  EXPECT_EQ(p.bytes.text(), "2 * 4 * batch * vocab");
  EXPECT_EQ(p.regime, Regime::memory);
  EXPECT_EQ(p.compute_peak, "fp32");
  EXPECT_EQ(p.memory_peak, "dram");
  EXPECT_EQ(p.check_seeds, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(p.secret_seeds, 2);
  EXPECT_EQ(p.allowed_libraries, (std::vector<std::string>{"cub"}));
  EXPECT_EQ(p.forbidden, (std::vector<std::string>{"cudnn", "torch::"}));
  EXPECT_EQ(p.required_instructions.at("sm_90a"), (std::vector<std::string>{"FFMA"}));
}

TEST_F(ProblemSpec, ProblemMethods) {
  const Problem p = load_problem(write(kValid));
  EXPECT_TRUE(p.supports("cuda"));
  EXPECT_FALSE(p.supports("metal"));
  EXPECT_EQ(p.variables(p.shapes[1]), (Variables{{"batch", 8}, {"vocab", 2}}));
  EXPECT_EQ(p.tensor_shape(p.weights[0], p.shapes[0]), (std::vector<int64_t>{2048, 2}));
  EXPECT_EQ(p.tensor_shape(p.outputs[1], p.shapes[1]), (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(p.shape_label(0), "small");
  EXPECT_EQ(p.shape_label(1), "batch=8 vocab=2");
  EXPECT_EQ(p.init_for(p.inputs[0], p.shapes[0]).generator, "softmax_spikes");
  EXPECT_EQ(p.init_for(p.inputs[0], p.shapes[1]).kind, InitSpec::Kind::normal);
  EXPECT_EQ(regime_name(Regime::memory), "memory");
  EXPECT_EQ(regime_name(Regime::compute), "compute");

  ShapeCase odd{"", {3, 5}, {}};  // vocab / 2 = 2.5
  try {
    p.tensor_shape(p.weights[0], odd);
    ADD_FAILURE() << "non-integer dim accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("weights[0].shape[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected a positive integer"), std::string::npos) << e.what();
  }
}

TEST_F(ProblemSpec, OptionalSectionsTakeDefaults) {
  std::string toml = patch("\n[policy]\nallowed_libraries = [\"cub\"]\nforbidden = [\"cudnn\", \"torch::\"]\n"
                           "required_instructions = { sm_90a = [\"FFMA\"] }\n", "");
  toml = patch("compute_peak = \"fp32\"\nmemory_peak = \"dram\"\n", "", toml);
  toml = patch("secret = 2\n", "", toml);
  toml = patch("init = { dist = \"uniform\", low = -0.5, high = 0.5 }\n", "", toml);
  const Problem p = load_problem(write(toml));
  EXPECT_EQ(p.secret_seeds, 1);
  EXPECT_EQ(p.compute_peak, "fp32");
  EXPECT_TRUE(p.forbidden.empty());
  EXPECT_TRUE(p.bitwise_deterministic);  // repeats must be bitwise identical unless the problem says otherwise
  EXPECT_EQ(p.weights[0].init.kind, InitSpec::Kind::uniform);
  EXPECT_EQ(p.weights[0].init.low, -1.0);
}

TEST_F(ProblemSpec, TomlSyntaxErrorHasLineAndColumn) {
  expect_error(patch("deck = \"example\"", "deck = \"example"), {"problem.toml:2:", "TOML syntax error"});
}

TEST_F(ProblemSpec, MissingRequiredKey) {
  expect_error(patch("deck = \"example\"\n", ""), {"deck", "required key is missing"});
  expect_error(patch("dtype = \"int32\"\n", ""), {"outputs[1].dtype", "required key is missing", "f32"});
  expect_error(kHeader + kTensors + kRest, {"shapes", "required key is missing"});
}

TEST_F(ProblemSpec, LevelIsKernelBenchV3sIntegerLevel) {
  for (int level = 1; level <= 4; ++level) {
    const Problem p = load_problem(write(patch("deck = \"example\"\n", "deck = \"v3\"\nlevel = " + std::to_string(level) + "\n")));
    EXPECT_EQ(p.deck, "v3");
    ASSERT_TRUE(p.level);
    EXPECT_EQ(*p.level, level);
  }
}

TEST_F(ProblemSpec, BadLevelNamesTheFieldAndTheValue) {
  auto with_level = [&](const std::string& value) { return patch("deck = \"example\"\n", "deck = \"v3\"\nlevel = " + value + "\n"); };
  expect_error(with_level("7"), {"problem.toml:3:", "level", "an integer from 1 to 4", "found an integer (7)"});
  expect_error(with_level("0"), {"level", "an integer from 1 to 4", "found an integer (0)"});
  expect_error(with_level("-1"), {"level", "an integer from 1 to 4", "found an integer (-1)"});
  expect_error(with_level("2.0"), {"level", "an integer from 1 to 4", "found a float (2.0)"});
  expect_error(with_level("[1]"), {"level", "an integer from 1 to 4", "found an array"});
  // A string is what `level` held before it meant v3's level: the error says where a deck's name goes.
  expect_error(with_level("\"one\""), {"level", "an integer from 1 to 4", "found a string (\"one\")", "deck = \"one\""});
  expect_error(with_level("\"hard\""), {"level", "deck = \"hard\""});
}

TEST_F(ProblemSpec, DeckMustBeANonEmptyString) {
  expect_error(patch("deck = \"example\"", "deck = \"\""), {"deck", "a non-empty string"});
  expect_error(patch("deck = \"example\"", "deck = 1"), {"deck", "a non-empty string", "found an integer (1)"});
}

TEST_F(ProblemSpec, WrongType) {
  expect_error(patch("batch = 32", "batch = \"32\""), {"shapes[0].batch", "expected a positive integer", "found a string"});
  expect_error(patch("targets = [\"host\", \"cuda\"]", "targets = \"host\""), {"targets", "expected an array", "found a string"});
  expect_error(patch("secret = 2", "secret = 2.0"), {"seeds.secret", "expected an integer", "found a float (2.0)"});
}

TEST_F(ProblemSpec, UnknownKeyListsAllowedOnesAndSuggests) {
  expect_error(patch("tolerance = { atol = 1e-7", "tolerence = { atol = 1e-7"),
               {"outputs[0].tolerence", "unknown key", "name, dtype, shape, tolerance, comparator", "did you mean 'tolerance'"});
  expect_error(patch("rtol = 1e-5", "rtl = 1e-5"), {"outputs[0].tolerance.rtl", "unknown key", "atol, rtol"});
  expect_error(patch("description =", "descripton ="), {"descripton", "unknown key", "did you mean 'description'"});
  expect_error(patch("mean = 0.5", "median = 0.5"), {"inputs[0].init.median", "unknown key", "dist, mean, std"});
}

TEST_F(ProblemSpec, UnknownDtypeListsValidNames) {
  expect_error(patch("dtype = \"bf16\"", "dtype = \"bfloat17\""), {"weights[0].dtype", dtype_names(), "\"bfloat17\""});
}

TEST_F(ProblemSpec, ShapeExpressionMustParseAndUseDims) {
  expect_error(patch("\"vocab / 2\"", "\"vocab / \""), {"weights[0].shape[0]", "invalid expression", "position 9"});
  expect_error(patch("\"vocab / 2\"", "\"vocab / K\""), {"weights[0].shape[0]", "'K'", "not a dim", "batch, vocab"});
  expect_error(patch("\"vocab / 2\", 2]", "\"vocab / 2\", 0]"), {"weights[0].shape[1]", "positive integer"});
}

TEST_F(ProblemSpec, TensorShapeMustBeAPositiveIntegerInEveryCase) {
  expect_error(patch("vocab = 2\n", "vocab = 3\n"), {"weights[0].shape[0]", "expected a positive integer", "shapes[1]"});
}

TEST_F(ProblemSpec, DuplicateTensorNames) {
  expect_error(patch("name = \"bias\"", "name = \"x\""), {"weights[0].name", "\"x\"", "already used by inputs[0]"});
  expect_error(patch("name = \"top\"", "name = \"y\""), {"outputs[1].name", "already used by outputs[0]"});
}

TEST_F(ProblemSpec, ShapeMissingADim) {
  expect_error(patch("vocab = 2\n", ""), {"shapes[1].vocab", "required key is missing", "every dim (batch, vocab)"});
}

TEST_F(ProblemSpec, ShapeWithAnExtraDim) {
  expect_error(patch("vocab = 2\n", "vocab = 2\nseq = 4\n"), {"shapes[1].seq", "unknown key", "batch, vocab, label, init"});
}

TEST_F(ProblemSpec, DimsMustBePositiveIntegers) {
  expect_error(patch("batch = 8", "batch = 0"), {"shapes[1].batch", "expected a positive integer", "found an integer (0)"});
  expect_error(patch("batch = 8", "batch = 8.5"), {"shapes[1].batch", "expected a positive integer", "found a float"});
  expect_error(patch("dims = [\"batch\", \"vocab\"]", "dims = [\"batch\", \"batch\"]"), {"dims[1]", "listed twice"});
}

TEST_F(ProblemSpec, InitOverrideMustNameAnInputOrWeight) {
  expect_error(patch("init.x =", "init.z ="), {"shapes[0].init.z", "input or weight (x, bias)", "'z'"});
  expect_error(patch("init.x =", "init.y ="), {"shapes[0].init.y", "input or weight"});
}

TEST_F(ProblemSpec, UniformNeedsLowBelowHigh) {
  expect_error(patch("low = -0.5", "low = 0.5"), {"weights[0].init", "low < high", "low = 0.5, high = 0.5"});
}

TEST_F(ProblemSpec, NormalNeedsPositiveStd) {
  expect_error(patch("std = 3.0", "std = 0.0"), {"inputs[0].init.std", "> 0", "found a float (0.0)"});
  expect_error(patch("std = 3.0", "std = -1"), {"inputs[0].init.std", "> 0"});
}

TEST_F(ProblemSpec, InitDistMustBeKnown) {
  expect_error(patch("dist = \"normal\"", "dist = \"gauss\""), {"inputs[0].init.dist", "uniform, normal, generator", "\"gauss\""});
}

TEST_F(ProblemSpec, GeneratorNeedsAnIdentifierNameAndNumericParams) {
  expect_error(patch("generator = \"softmax_spikes\", ", ""), {"shapes[0].init.x.generator", "required key is missing"});
  expect_error(patch("\"softmax_spikes\"", "\"\""), {"shapes[0].init.x.generator", "identifier"});
  expect_error(patch("\"softmax_spikes\"", "\"soft max\""), {"shapes[0].init.x.generator", "identifier"});
  expect_error(patch("scale = 50", "scale = \"big\""), {"shapes[0].init.x.scale", "a number", "found a string"});
  // Registration is the evaluator's business: an unregistered name loads.
  EXPECT_NO_THROW(load_problem(write(patch("\"softmax_spikes\"", "\"not_registered_anywhere\""))));
}

TEST_F(ProblemSpec, ToleranceNeedsACriterion) {
  expect_error(patch("tolerance = { atol = 0 }", "tolerance = { source = \"exact\" }"),
               {"outputs[1].tolerance", "at least one criterion: atol, rtol, max_ulp or rel_l2"});
}

TEST_F(ProblemSpec, ToleranceMustNotBeNegative) {
  expect_error(patch("atol = 1e-7", "atol = -1e-7"), {"outputs[0].tolerance.atol", "expected a number >= 0"});
  expect_error(patch("max_ulp = 8", "max_ulp = -8"), {"outputs[0].tolerance.max_ulp", ">= 0"});
}

TEST_F(ProblemSpec, RegimeMustBeMemoryOrCompute) {
  expect_error(patch("regime = \"memory\"", "regime = \"latency\""), {"cost.regime", "\"memory\" or \"compute\"", "\"latency\""});
  expect_error(patch("compute_peak = \"fp32\"", "compute_peak = \"fp31\""), {"cost.compute_peak", "fp64, fp32, fp64_tc"});
}

TEST_F(ProblemSpec, CheckSeedsAtLeastThreeAndDistinct) {
  expect_error(patch("check = [1, 2, 3]", "check = [1, 2]"), {"seeds.check", "at least 3 distinct", "found 2 seeds"});
  expect_error(patch("check = [1, 2, 3]", "check = [1, 2, 1]"), {"seeds.check[2]", "repeats seeds.check[0]"});
  expect_error(patch("check = [1, 2, 3]", "check = [1, 2, -3]"), {"seeds.check[2]", "non-negative integer"});
}

TEST_F(ProblemSpec, SecretSeedsAtLeastOne) {
  expect_error(patch("secret = 2", "secret = 0"), {"seeds.secret", "integer from 1", "found an integer (0)"});
}

TEST_F(ProblemSpec, NameMustEqualFolderName) {
  expect_error(kValid, {"name", "the folder name \"softmax2\"", "found \"softmax\""}, "softmax2");
}

TEST_F(ProblemSpec, ShapesMustNotBeEmpty) {
  expect_error(kHeader + "shapes = []\n" + kTensors + kRest, {"shapes", "at least one [[shapes]]"});
}

TEST_F(ProblemSpec, CostMayOnlyReferToDims) {
  expect_error(patch("\"5 * batch * vocab\"", "\"5 * batch * seq\""), {"cost.flops", "'seq'", "not a dim"});
  expect_error(patch("\"2 * 4 * batch * vocab\"", "\"2 * 4 * (batch\""), {"cost.bytes", "expected ')'"});
}

TEST_F(ProblemSpec, TargetsFromAKnownSet) {
  expect_error(patch("[\"host\", \"cuda\"]", "[\"host\", \"metal\"]"), {"targets[1]", "one of: host, cuda"});
  expect_error(patch("[\"host\", \"cuda\"]", "[]"), {"targets", "non-empty"});
}

TEST_F(ProblemSpec, PolicyArchKeysAreChecked) {
  expect_error(patch("sm_90a =", "sm90a ="), {"policy.required_instructions.sm90a", "sm_90a"});
  // Classes are matched exactly against cuobjdump's opcodes: lower case or modifiers never match.
  expect_error(patch("[\"FFMA\"]", "[\"qgmma\"]"), {"policy.required_instructions.sm_90a", "'qgmma'", "upper case"});
  expect_error(patch("[\"FFMA\"]", "[\"QGMMA.64x8x32\"]"), {"policy.required_instructions.sm_90a", "'QGMMA.64x8x32'"});
}

TEST_F(ProblemSpec, DeterminismIsBitwiseOrTolerance) {
  const std::string with = patch("required_instructions = { sm_90a = [\"FFMA\"] }\n",
                                 "required_instructions = { sm_90a = [\"FFMA\"] }\ndeterminism = \"tolerance\"\n");
  EXPECT_FALSE(load_problem(write(with)).bitwise_deterministic);
  expect_error(patch("determinism = \"tolerance\"", "determinism = \"exact\"", with),
               {"policy.determinism", "\"bitwise\" or \"tolerance\""});
  expect_error(patch("determinism = \"tolerance\"", "determinism = true", with), {"policy.determinism"});
}

TEST_F(ProblemSpec, ForbiddenTorchNamesArePythonIdentifiers) {
  const std::string with = patch("forbidden = [\"cudnn\", \"torch::\"]\n",
                                 "forbidden = [\"cudnn\", \"torch::\"]\nforbidden_torch = [\"topk\", \"_sort\"]\n");
  EXPECT_EQ(load_problem(write(with)).forbidden_torch, (std::vector<std::string>{"topk", "_sort"}));
  EXPECT_TRUE(load_problem(write(kValid)).forbidden_torch.empty());
  // A dotted path or a call would never equal a name in the source: it would forbid nothing.
  expect_error(patch("[\"topk\", \"_sort\"]", "[\"topk\", \"torch.sort\"]", with),
               {"policy.forbidden_torch[1]", "'torch.sort'", "Python identifier"});
  expect_error(patch("[\"topk\", \"_sort\"]", "[\"topk(\"]", with), {"policy.forbidden_torch[0]", "'topk('"});
  expect_error(patch("[\"topk\", \"_sort\"]", "[\"__\"]", with), {"policy.forbidden_torch[0]", "'__'"});
  expect_error(patch("[\"topk\", \"_sort\"]", "\"topk\"", with), {"policy.forbidden_torch"});
}

// The complete example of docs/problem-format.md must stay valid as the format evolves.
TEST_F(ProblemSpec, DocumentedExampleLoads) {
  const fs::path doc = fs::path(KBENCH_SOURCE_DIR) / "docs/problem-format.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t begin = text.find("```toml\n") + 8, end = text.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  const Problem p = load_problem(write(text.substr(begin, end - begin)));
  EXPECT_EQ(p.shapes.size(), 3u);
  EXPECT_EQ(p.shapes[2].init.at("x").params.at("spike"), 80.0);
}

TEST_F(ProblemSpec, MissingFileSaysWhatIsNeeded) {
  fs::create_directories(root_ / "empty");
  try {
    load_problem(root_ / "empty");
    ADD_FAILURE() << "loaded a folder without problem.toml";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a problem.toml"), std::string::npos) << e.what();
  }
}

TEST_F(ProblemSpec, LoadDeckTakesProblemFoldersSortedById) {
  write(patch("name = \"softmax\"", "name = \"zeta\""), "zeta");
  write(patch("name = \"softmax\"", "name = \"alpha\""), "alpha");
  write(kValid, "softmax");
  fs::create_directories(root_ / "notes");  // no problem.toml: not a problem
  std::ofstream(root_ / "README.md") << "deck";
  const std::vector<Problem> deck = load_deck(root_);
  ASSERT_EQ(deck.size(), 3u);
  EXPECT_EQ(deck[0].id, "alpha");
  EXPECT_EQ(deck[1].id, "softmax");
  EXPECT_EQ(deck[2].id, "zeta");

  write(patch("secret = 2", "secret = 0", patch("name = \"softmax\"", "name = \"beta\"")), "beta");
  EXPECT_THROW(load_deck(root_), SpecError);
  EXPECT_THROW(load_deck(root_ / "missing"), SpecError);
}

TEST_F(ProblemSpec, BaselineTableIsLoadedAndValidated) {
  const Problem p = load_problem(write(kValid + "\n[baseline]\ndescription = \"cuDNN softmax\"\nlibraries = [\"cudnn\"]\n"));
  EXPECT_EQ(p.baseline_description, "cuDNN softmax");
  EXPECT_EQ(p.baseline_libraries, (std::vector<std::string>{"cudnn"}));
  expect_error(kValid + "\n[baseline]\nlibraries = [\"-lcudnn; rm\"]\n", {"baseline.libraries", "-l<name>"});
  expect_error(kValid + "\n[baseline]\nlibrary = [\"cudnn\"]\n", {"baseline.library", "unknown key"});
  EXPECT_FALSE(p.baseline_synchronizes);
  EXPECT_TRUE(load_problem(write(kValid + "\n[baseline]\nsynchronizes = true\n")).baseline_synchronizes);
  expect_error(kValid + "\n[baseline]\nsynchronizes = \"yes\"\n", {"baseline.synchronizes", "true or false"});
}

}  // namespace kb

namespace kb {

// An input's perturbation before timed calls (core/perturb.h): "swap" by default, "none" for
// structured inputs, nothing else; weights are never perturbed; some input must be.
TEST_F(ProblemSpec, PerturbIsSwapOrNoneOnInputsAndSomeInputIsPerturbed) {
  EXPECT_TRUE(load_problem(write(kValid)).inputs[0].perturb) << "swap is the default";
  const std::string anchor = "init = { dist = \"normal\", mean = 0.5, std = 3.0 }\n";
  const std::string two_inputs = patch(anchor, anchor + "perturb = \"swap\"\n\n[[inputs]]\nname = \"idx\"\ndtype = "
                                                        "\"int32\"\nshape = [\"batch\"]\nperturb = \"none\"\n");
  const Problem p = load_problem(write(two_inputs));
  EXPECT_TRUE(p.inputs[0].perturb);
  EXPECT_FALSE(p.inputs[1].perturb);
  expect_error(patch("perturb = \"none\"", "perturb = \"redraw\"", two_inputs),
               {"inputs[1].perturb", "\"swap\"", "\"none\"", "\"redraw\""});
  expect_error(patch("perturb = \"none\"", "perturb = false", two_inputs), {"inputs[1].perturb", "found a boolean"});
  expect_error(patch("perturb = \"swap\"", "perturb = \"none\"", two_inputs),
               {"inputs", "every input has perturb = \"none\"", "at least one input must be perturbed"});
  expect_error(patch("init = { dist = \"uniform\", low = -0.5, high = 0.5 }\n",
                     "init = { dist = \"uniform\", low = -0.5, high = 0.5 }\nperturb = \"swap\"\n"),
               {"weights[0].perturb", "unknown key"});
}

}  // namespace kb
