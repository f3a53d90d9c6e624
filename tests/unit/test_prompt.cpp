// Prompt templates: variables filled from the problem as judged, unknown variables refused.
#include <gtest/gtest.h>

#include "agent/prompt.h"
#include "core/version.h"

using namespace kb;
using namespace std::chrono_literals;

namespace {
Problem softmax() { return load_problem(std::filesystem::path(source_dir()) / "problems/softmax"); }
}  // namespace

TEST(PromptTemplate, ReplacesVariablesWithOrWithoutSpaces) {
  EXPECT_EQ(render_template("a {{x}} b {{ y }} c", {{"x", "1"}, {"y", "2"}}, "f.md"), "a 1 b 2 c");
  // A list value's own trailing newline does not double the template's.
  EXPECT_EQ(render_template("list:\n{{l}}\nend", {{"l", "- a\n- b\n"}}, "f.md"), "list:\n- a\n- b\nend");
  EXPECT_EQ(render_template("single { brace } and }} alone", {}, "f.md"), "single { brace } and }} alone");
}

TEST(PromptTemplate, UnknownVariableNamesFileLineAndKnownOnes) {
  try {
    render_template("line one\nthe {{gpuu}} here", {{"gpu", "H100"}}, "problems/x/prompt.md");
    FAIL();
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("problems/x/prompt.md:2"), std::string::npos) << m;
    EXPECT_NE(m.find("{{gpuu}}"), std::string::npos) << m;
    EXPECT_NE(m.find("known: gpu"), std::string::npos) << m;
  }
  EXPECT_THROW(render_template("open {{gpu\n}}", {{"gpu", "x"}}, "f.md"), SpecError);
}

TEST(Prompt, SoftmaxPromptCarriesTheJudgedNumbers) {
  const Problem p = softmax();
  const std::string text = render_prompt(p, PromptContext{"host", "Test CPU (2 cores)", 45min});
  EXPECT_EQ(text.find("{{"), std::string::npos) << text;
  for (const char* must : {"Test CPU (2 cores)", "solution.cpp", "rtol = 0.001", "atol = 1e-30", "batch = 4, vocab = 131072",
                           "batch = 64, vocab = 1024", "3 fixed seeds plus 1 secret seed", "45 minutes", "./kbench check",
                           "./kbench bench", "`p->dim_values[1]` = vocab", "c->outputs[0]"})
    EXPECT_NE(text.find(must), std::string::npos) << "missing '" << must << "' in:\n" << text;
  const std::string cuda = render_prompt(p, PromptContext{"cuda", "NVIDIA H100 80GB HBM3", 30min});
  EXPECT_NE(cuda.find("CUDA C++"), std::string::npos);
  EXPECT_NE(cuda.find("solution.cu"), std::string::npos);
  EXPECT_NE(cuda.find("c->stream"), std::string::npos);
}

TEST(Prompt, ToleranceTextFollowsEachCriterion) {
  TensorSpec t;
  t.name = "out";
  t.dtype = DType::bf16;
  t.tolerance.max_ulp = 2;
  t.tolerance.rel_l2 = 1e-3;
  const std::string s = describe_tolerance_for_prompt(t);
  EXPECT_NE(s.find("within 2 ulp"), std::string::npos) << s;
  EXPECT_NE(s.find("bf16"), std::string::npos) << s;
  EXPECT_NE(s.find("<= 0.001 over the whole tensor"), std::string::npos) << s;
  EXPECT_EQ(s.find("atol"), std::string::npos) << s;
}
