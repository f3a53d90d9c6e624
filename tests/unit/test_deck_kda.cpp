// problems/kda: the cost formulas against a hand count, the fp64 oracle against a recurrence worked
// out by hand (T = 3, K = V = 2) and on asked-for rows only, the generators' promises (unit rows,
// decays in [-5, 0), beta in (0, 1), different data for different seeds), and the tolerance of
// problem.toml against outputs that drop a term or are all zero (they must fail, the oracle's own
// bf16-rounded output must pass). The cuda solutions are compiled with nvcc where there is one.
#include <gtest/gtest.h>


#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "agent/prompt.h"
#include "eval/judge.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

kb::Problem load() { return kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/kda"); }

// A case of the problem with other dims (the deck's shapes are 2-4M elements per tensor, too many
// for a unit test); the init specs of shape 0 stay in force.
kb::ShapeCase small_shape(const kb::Problem& p, int64_t B, int64_t T, int64_t H) {
  kb::ShapeCase s = p.shapes.at(0);
  s.label = "unit";
  s.dims = {B, T, H, 128, 128};
  return s;
}

std::vector<double> run_oracle(const kb::Problem& p, const kb::ShapeCase& shape, const std::vector<kb::HostTensor>& in,
                               const std::vector<int64_t>& rows = {}) {
  const std::vector<kb::HostTensor> weights;
  const int64_t n = in.at(2).numel();  // out has v's shape
  std::vector<std::vector<double>> expected(1, std::vector<double>(static_cast<size_t>(n), NAN));
  kb::OracleCase oc{p, shape, in, weights, expected, rows};
  kb::OracleFn oracle = kb::find_oracle("kda");
  EXPECT_NE(oracle, nullptr);
  if (oracle) oracle(oc);
  return expected[0];
}

TEST(DeckKda, CostMatchesAHandCount) {
  const kb::Problem p = load();
  ASSERT_EQ(p.shapes.size(), 5u);
  const auto v = p.variables(p.shapes[0]);  // B 2, T 1024, H 8, K = V = 128
  const double tokens_heads = 2.0 * 1024 * 8;
  // decay 128*128, S^T k 2*128*128, update 2*128*128, readout 2*128*128.
  EXPECT_EQ(p.flops.eval(v), tokens_heads * (128 * 128 + 3 * 2 * 128 * 128));
  // q 256 B, k 256 B, v 256 B, g 512 B, beta 2 B, out 256 B per (b, t, h).
  EXPECT_EQ(p.bytes.eval(v), tokens_heads * (256 + 256 + 256 + 512 + 2 + 256));
  EXPECT_EQ(p.regime, kb::Regime::memory);
  EXPECT_EQ(p.compute_peak, "bf16_tc");
  // The ragged shape's T is not a multiple of a chunk of 64 (nor 16).
  EXPECT_NE(p.shapes[4].dims[1] % 64, 0);
  EXPECT_NE(p.shapes[4].dims[1] % 16, 0);
}

// B = H = 1, T = 3, K = V = 2: the recurrence by hand (comments), with exactly representable inputs.
TEST(DeckKda, OracleMatchesARecurrenceWorkedOutByHand) {
  const kb::Problem p = load();
  const kb::ShapeCase& shape = p.shapes.at(0);  // unused by the oracle: it reads the tensors' shapes
  auto t4 = [](const char* n, kb::DType d, std::vector<double> vals, std::vector<int64_t> sh) {
    kb::HostTensor t(n, d, std::move(sh));
    for (size_t i = 0; i < vals.size(); ++i) t.set(static_cast<int64_t>(i), vals[i]);
    return t;
  };
  const double l2 = std::log(0.5), l4 = std::log(0.25);
  std::vector<kb::HostTensor> in;
  in.push_back(t4("q", kb::DType::bf16, {1, 0, 0, 1, 1, 1}, {1, 3, 1, 2}));
  in.push_back(t4("k", kb::DType::bf16, {1, 0, 0, 1, 0.5, 0.5}, {1, 3, 1, 2}));
  in.push_back(t4("v", kb::DType::bf16, {2, 4, -2, 6, 1, 1}, {1, 3, 1, 2}));
  in.push_back(t4("g", kb::DType::f32, {0, 0, l2, 0, 0, l4}, {1, 3, 1, 2}));
  in.push_back(t4("beta", kb::DType::bf16, {0.5, 0.25, 1.0}, {1, 3, 1}));
  const auto o = run_oracle(p, shape, in);
  const double s = 1 / std::sqrt(2.0);
  // S rows are key channels. t = 0: no decay; u = 0.5 (2, 4) = (1, 2); S = [[1, 2], [0, 0]];
  // out = s S^T (1, 0) = s (1, 2).
  // t = 1: decay (0.5, 1): S = [[0.5, 1], [0, 0]]; S^T k = S^T (0, 1) = 0; u = 0.25 (-2, 6) =
  // (-0.5, 1.5); S = [[0.5, 1], [-0.5, 1.5]]; out = s S^T (0, 1) = s (-0.5, 1.5).
  // t = 2: decay (1, 0.25): S = [[0.5, 1], [-0.125, 0.375]]; S^T k = 0.5 (0.375, 1.375) =
  // (0.1875, 0.6875); u = (1, 1) - that = (0.8125, 0.3125); S += (0.5, 0.5) u^T =
  // [[0.90625, 1.15625], [0.28125, 0.53125]]; out = s S^T (1, 1) = s (1.1875, 1.6875).
  const double want[6] = {s * 1, s * 2, s * -0.5, s * 1.5, s * 1.1875, s * 1.6875};
  // exp of the fp32-rounded log(0.5) is 0.5 to ~3e-8 relative; any other order of the steps (decay
  // after the update, readout before it) is off by > 0.1 at t = 2.
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(o[static_cast<size_t>(i)], want[i], 1e-7) << "element " << i;
}

TEST(DeckKda, OracleComputesAskedRowsOnlyAndTheSameValues) {
  const kb::Problem p = load();
  const kb::ShapeCase shape = small_shape(p, 2, 40, 3);
  const auto in = kb::generate_inputs(p, shape, 5);
  const auto full = run_oracle(p, shape, in);
  // Rows are (b, t, h): (b * T + t) * H + h. Ask for (1, 39, 2), (0, 7, 1) and (0, 7, 1) again.
  const std::vector<int64_t> rows = {(1 * 40 + 39) * 3 + 2, (0 * 40 + 7) * 3 + 1, (0 * 40 + 7) * 3 + 1};
  const auto part = run_oracle(p, shape, in, rows);
  int64_t written = 0;
  for (size_t i = 0; i < part.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / 128;
    const bool asked = row == rows[0] || row == rows[1];
    if (asked) {
      EXPECT_EQ(part[i], full[i]) << i;
      ++written;
    } else {
      ASSERT_TRUE(std::isnan(part[i])) << "row " << row << " was not asked for";
    }
  }
  EXPECT_EQ(written, 2 * 128);
}

TEST(DeckKda, GeneratorsGiveUnitRowsBoundedDecaysAndNewDataPerSeed) {
  const kb::Problem p = load();
  const kb::ShapeCase shape = small_shape(p, 1, 64, 4);
  const auto a = kb::generate_inputs(p, shape, 1), b = kb::generate_inputs(p, shape, 2);
  ASSERT_EQ(a.size(), 5u);
  for (size_t t = 0; t < a.size(); ++t) {  // every tensor differs between the seeds almost everywhere
    int64_t same = 0;
    for (int64_t i = 0; i < a[t].numel(); ++i) same += a[t].get(i) == b[t].get(i);
    EXPECT_LT(same, a[t].numel() / 50) << a[t].name;
  }
  for (int qk : {0, 1}) {  // q, k: unit rows (up to bf16 rounding), mostly positive after the SiLU
    const auto& x = a[static_cast<size_t>(qk)];
    int64_t positive = 0;
    for (int64_t r = 0; r < x.numel() / 128; ++r) {
      double n2 = 0;
      for (int64_t c = 0; c < 128; ++c) {
        n2 += x.get(r * 128 + c) * x.get(r * 128 + c);
        positive += x.get(r * 128 + c) > 0;
      }
      EXPECT_NEAR(std::sqrt(n2), 1.0, 4e-3) << x.name << " row " << r;
    }
    EXPECT_GT(positive, x.numel() / 2) << x.name;
  }
  const auto& g = a[3];
  double gmin = 0, gmax = -10;
  for (int64_t i = 0; i < g.numel(); ++i) {
    gmin = std::min(gmin, g.get(i));
    gmax = std::max(gmax, g.get(i));
  }
  EXPECT_GE(gmin, -5.0);
  EXPECT_LT(gmin, -1.0);    // some channels forget fast...
  EXPECT_GT(gmax, -1e-3);   // ...and some barely at all
  EXPECT_LT(gmax, 0.0);
  for (int64_t i = 0; i < a[4].numel(); ++i) {
    EXPECT_GT(a[4].get(i), 0.0);
    EXPECT_LT(a[4].get(i), 1.0);
  }
}

// The tolerance of problem.toml, applied by the real judge to a 512-step case: the oracle's output
// rounded to bf16 passes; all zeros, beta ignored, or the decay ignored fail.
TEST(DeckKda, ToleranceRejectsZeroAndDroppedTermsAndAcceptsTheRoundedOracle) {
  const kb::Problem p = load();
  const kb::ShapeCase shape = small_shape(p, 1, 512, 2);
  const auto in = kb::generate_inputs(p, shape, 3);
  const auto expected = run_oracle(p, shape, in);
  const kb::TensorSpec& spec = p.outputs.at(0);
  const std::vector<int64_t> all_rows;
  auto judge = [&](const std::vector<double>& values) {
    kb::HostTensor got("out", kb::DType::bf16, in[2].shape);
    for (int64_t i = 0; i < got.numel(); ++i) got.set(i, values[static_cast<size_t>(i)]);
    return kb::judge_output(spec, got, expected, all_rows);
  };
  // The outputs are well above atol: their RMS is several times it.
  double sum2 = 0;
  for (double e : expected) sum2 += e * e;
  const double rms = std::sqrt(sum2 / static_cast<double>(expected.size()));
  EXPECT_GT(rms, 5 * spec.tolerance.atol.value());

  const auto rounded = judge(expected);
  EXPECT_TRUE(rounded.pass) << rounded.message;

  const auto zero = judge(std::vector<double>(expected.size(), 0.0));
  EXPECT_FALSE(zero.pass);
  EXPECT_EQ(kb::reason_name(zero.failure), "mismatch");
  EXPECT_GT(zero.failed, zero.checked / 2) << zero.message;

  auto with = [&](size_t tensor, double value) {
    auto changed = in;
    for (int64_t i = 0; i < changed[tensor].numel(); ++i) changed[tensor].set(i, value);
    return run_oracle(p, shape, changed);
  };
  const auto no_beta = judge(with(4, 1.0));   // beta taken as 1
  EXPECT_EQ(kb::reason_name(no_beta.failure), "mismatch") << no_beta.message;
  EXPECT_GT(no_beta.failed, no_beta.checked / 2);
  const auto no_decay = judge(with(3, 0.0));  // exp(g) taken as 1
  EXPECT_EQ(kb::reason_name(no_decay.failure), "mismatch") << no_decay.message;
  EXPECT_GT(no_decay.failed, no_decay.checked / 2);
}

// The prompt renders for the cuda target with the numbers the judge enforces and every shape.
TEST(DeckKda, PromptCarriesTheJudgedNumbersAndEveryShape) {
  const kb::Problem p = load();
  using namespace std::chrono_literals;
  const std::string text = kb::render_prompt(p, kb::PromptContext{"cuda", "NVIDIA H100 80GB HBM3", 45min});
  EXPECT_EQ(text.find("{{"), std::string::npos) << text;
  for (const char* must : {"NVIDIA H100 80GB HBM3", "solution.cu", "atol = 0.002", "rtol = 0.02", "<= 0.01 over the whole",
                           "B = 2, T = 1024, H = 8, K = 128, V = 128", "B = 2, T = 2048", "B = 1, T = 4096",
                           "B = 1, T = 2048, H = 4", "B = 1, T = 3000", "3 fixed seeds plus 1 secret seed", "naive_recurrent_kda", "memory-bound",
                           "./kbench check", "./kbench bench", "ncu", "c->outputs[0]"})
    EXPECT_NE(text.find(must), std::string::npos) << "missing '" << must << "' in:\n" << text;
}

}  // namespace
