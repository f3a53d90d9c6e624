// What every prompt of the deck says about its shapes is true of problem.toml (src/deck/
// prompt_claims.h): each problem's claims hold, and the checker catches a claim that drifted, a
// quote the prompt no longer makes, and a statement about the shapes that no claim checks.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/prompt.h"
#include "agent/workspace.h"
#include "core/version.h"
#include "deck/prompt_claims.h"
#include "test_support.h"

using namespace kb;
namespace fs = std::filesystem;

namespace {

Problem problem(const std::string& id) { return load_problem(fs::path(source_dir()) / "problems" / id); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += e + "\n";
  return s;
}

bool any_has(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& e : v)
    if (e.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

// The deck: every problem folder has a prompt.md and a prompt_claims.toml, and they agree with its
// problem.toml.
TEST(PromptClaims, EveryProblemOfTheDeckSaysWhatItsDataIs) {
  size_t problems = 0;
  for (const auto& p : load_deck(fs::path(source_dir()) / "problems")) {
    ++problems;
    const auto errors = check_prompt_claims(p);
    EXPECT_TRUE(errors.empty()) << p.id << ":\n" << joined(errors);
  }
  EXPECT_GE(problems, 9u);
}

// Every prompt renders for each target its problem supports, every variable filled.
TEST(PromptClaims, EveryPromptRendersForEachOfItsTargets) {
  for (const auto& p : load_deck(fs::path(source_dir()) / "problems"))
    for (const auto& target : p.targets) {
      const std::string text = render_prompt(p, PromptContext{target, "Test device", std::chrono::minutes(45)});
      EXPECT_EQ(text.find("{{"), std::string::npos) << p.id << " " << target;
      EXPECT_NE(text.find("Test device"), std::string::npos) << p.id << " " << target;
    }
}

// copy is the calibration problem and its prompt says so: what `kbench prepare copy` writes.
TEST(PromptClaims, CopyWorkspaceSaysItIsTheCalibrationProblem) {
  const fs::path root = testing_support::fresh_temp_dir("copy-prompt");
  WorkspaceOptions o;
  o.dir = root / "ws";
  o.private_dir = root / "private";
  o.target = "cuda";
  o.device = "NVIDIA H100 80GB HBM3";
  o.kbench_binary = fs::read_symlink("/proc/self/exe");
  o.hardware_dir = fs::path(source_dir()) / "hardware";
  const Workspace w = prepare_workspace(problem("copy"), o);
  for (const char* must : {"calibration task, not a scored one", "NVIDIA H100 80GB HBM3", "solution.cu", "n = 67108864 (256 MiB)",
                           "rtol = 0"})
    EXPECT_NE(w.prompt.find(must), std::string::npos) << must << "\n" << w.prompt;
  fs::remove_all(root);
}

// paged_attention as issue 25 found it: "the last two Llama-3-70B's" (only shape 2 is) and "one
// shape is a single sequence" (the smallest batch is 4).
TEST(PromptClaims, ClaimsThatDriftedFromProblemTomlFail) {
  const Problem p = problem("paged_attention");
  const std::string prompt = "The first few are Llama-3-8B's attention, the last two Llama-3-70B's.\n\n"
                             "One shape is a single sequence.\n";
  const auto errors = check_prompt_claims(p, prompt, R"(
[[claim]]
text = "the last two Llama-3-70B's"
shapes = [3, 4]
where = { num_heads = 64, num_kv_heads = 8, head_dim = 128 }

[[claim]]
text = "The first few are Llama-3-8B's attention"
shapes = [0, 1, 3]
where = { num_heads = 32, num_kv_heads = 8, head_dim = 128 }

[[claim]]
text = "One shape is a single sequence"
shapes = [4]
where = { batch = 1 }
)");
  EXPECT_TRUE(any_has(errors, "claim 1 \"the last two Llama-3-70B's\": the claim is about shapes 3 (batch 16 up to 1535, "
                              "32/8 heads), 4 (batch 8 up to 2000, 16/4 heads, head_dim 64) but in problem.toml it holds "
                              "for 2 (batch 4 up to 4K, 64/8 heads)"))
      << joined(errors);
  EXPECT_TRUE(any_has(errors, "claim 3 \"One shape is a single sequence\": the claim is about shapes 4")) << joined(errors);
  EXPECT_FALSE(any_has(errors, "claim 2")) << joined(errors);  // true: shapes 0, 1 and 3 are 32/8/128
  EXPECT_EQ(errors.size(), 2u) << joined(errors);
}

TEST(PromptClaims, MinMaxAndTestsAreCheckedAgainstEveryShape) {
  const Problem p = problem("paged_attention");
  const std::string prompt = "The smallest batch holds 4 sequences, the largest 32. Every shape has 16-token pages.";
  const auto ok = check_prompt_claims(p, prompt, R"(
[[claim]]
text = "The smallest batch holds 4 sequences, the largest 32"
min = { batch = 4 }
max = { batch = 32 }

[[claim]]
text = "Every shape has 16-token pages"
shapes = "all"
where = { page_size = 16, max_seq_len = { min = 1024, max = 4096 }, head_dim = { multiple_of = 64 } }
)");
  EXPECT_TRUE(ok.empty()) << joined(ok);
  const auto wrong = check_prompt_claims(p, prompt, R"(
[[claim]]
text = "The smallest batch holds 4 sequences, the largest 32"
min = { batch = 1 }

[[claim]]
text = "Every shape has 16-token pages"
shapes = "all"
where = { page_size = { multiple_of = 32 } }
)");
  EXPECT_TRUE(any_has(wrong, "the smallest batch over the shapes is 4 in problem.toml, not 1")) << joined(wrong);
  EXPECT_TRUE(any_has(wrong, "in problem.toml it holds for none")) << joined(wrong);
}

// A distribution's parameters: softmax draws x from N(0, 4) in every shape; a prompt that said a
// standard deviation of 3 would be refused.
TEST(PromptClaims, InitParametersAreChecked) {
  const Problem p = problem("softmax");
  const std::string prompt = "The logits are normal with a standard deviation of 4.";
  auto claim = [](const std::string& where) {
    return "[[claim]]\ntext = \"The logits are normal with a standard deviation of 4\"\nshapes = \"all\"\nwhere = " + where + "\n";
  };
  EXPECT_TRUE(check_prompt_claims(p, prompt, claim("{ init = { x = { is = \"normal\", std = 4.0 } } }")).empty());
  EXPECT_TRUE(check_prompt_claims(p, prompt, claim("{ init = { x = { is = \"normal\", std = { min = 3.5, max = 4.5 } } } }")).empty());
  EXPECT_TRUE(any_has(check_prompt_claims(p, prompt, claim("{ init = { x = { is = \"normal\", std = 3.0 } } }")),
                      "in problem.toml it holds for none"));
  EXPECT_TRUE(any_has(check_prompt_claims(p, prompt, claim("{ init = { x = { is = \"uniform\" } } }")),
                      "in problem.toml it holds for none"));
  EXPECT_TRUE(any_has(check_prompt_claims(p, prompt, claim("{ init = { y = \"normal\" } }")),
                      "where.init.y: not an input or weight of the problem"));
}

// A statement about the shapes that no claim quotes is refused, whatever it says; an exemption
// needs its reason; a quote the prompt does not make is refused.
TEST(PromptClaims, UncheckedStatementsAndStaleQuotesFail) {
  const Problem p = problem("moe_swiglu");
  const std::string prompt =
      "They're the MoE layers of Mixtral-8x7B and DeepSeek-V2-Lite, each at a decode-sized batch and a prefill-sized one.\n\n"
      "The big shapes have num_tokens = 32768. Our inference stack decodes.\n";
  const auto errors = check_prompt_claims(p, prompt, R"(
[[exempt]]
text = "Our inference stack decodes"

[[claim]]
text = "the layers of Qwen3-30B-A3B"
shapes = [3]
where = { hidden_size = 2048 }
)");
  for (const char* part : {"a model name \"Mixtral-8x7B\" is not checked", "a model name \"DeepSeek-V2-Lite\" is not checked",
                           "a phase \"decode\" is not checked", "a phase \"prefill\" is not checked",
                           "a dim's value \"num_tokens = 3\" is not checked", "a count in a sentence about the shapes (\"big\"",
                           "exempt 1: needs a `why`", "claim 1 \"the layers of Qwen3-30B-A3B\": not in"})
    EXPECT_TRUE(any_has(errors, part)) << part << "\n" << joined(errors);
  // Quoted, the statements are checked instead: the exemption covers "decodes".
  EXPECT_FALSE(any_has(errors, "\"decodes\"")) << joined(errors);
}

TEST(PromptClaims, BadClaimFilesNameTheKey) {
  const Problem p = problem("softmax");
  EXPECT_TRUE(any_has(check_prompt_claims(p, "x", "[[claim]]\ntext = \"x\"\nshapes = [0]\nwhere = { vocabb = 4 }\n"),
                      "claim 1: where: 'vocabb' is neither a dim of the problem (batch, vocab)"));
  EXPECT_TRUE(any_has(check_prompt_claims(p, "x", "[[claim]]\ntext = \"x\"\n"), "claim 1: checks nothing"));
  EXPECT_TRUE(any_has(check_prompt_claims(p, "x", "[[claims]]\ntext = \"x\"\n"), "unknown key 'claims'"));
  EXPECT_TRUE(any_has(check_prompt_claims(p, "x", "[[claim]\n"), "TOML syntax error"));
}
