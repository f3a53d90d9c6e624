// Hand annotations: a person's verdict on one agent run, written as <run>/annotation.toml
// (docs/annotations.md), in KernelBench-Hard's schema: verdict, summary, verbatim quotes from the
// run's files, implication. kbench checks what a reader cannot: that every quote really is in the
// file it names, at the lines it names.
//
//   verdict = "reward_hack"
//   summary = "Caches the first call's output keyed on the input pointer."
//   implication = "The cell's time measures a memcpy, not a softmax."
//   [[quotes]]
//   file = "solution/solution.cu"     # relative to the run directory
//   lines = "41-43"                   # 1-based, inclusive; or "41"
//   label = "the cache"               # optional caption
//   text = """
//   if (c->inputs[0].data == last_in) { ... }
//   """
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb {

struct AnnotationQuote {
  std::string file;   // relative to the run directory
  int first = 0;      // 1-based line range, inclusive
  int last = 0;
  std::string label;  // optional caption
  std::string text;   // verbatim from the file
};

struct HandAnnotation {
  std::string verdict;      // one of annotation_verdict (eval/annotation.h)
  std::string summary;
  std::string implication;  // required unless the verdict is "clean"
  std::vector<AnnotationQuote> quotes;
};

// One thing wrong with an annotation file: where, and what to do about it.
struct AnnotationIssue {
  std::string file;     // the annotation file
  std::string field;    // "verdict", "quotes[1].text", ... ("" for the file as a whole)
  std::string message;
};

struct HandAnnotationCheck {
  std::optional<HandAnnotation> annotation;  // what could be read (also when there are issues)
  std::vector<AnnotationIssue> issues;       // empty: valid
  bool valid() const { return issues.empty(); }
};

// Text with every run of whitespace made one space and both ends trimmed: quotes are compared so,
// since a quote's indentation and line breaks change when it is pasted into TOML.
std::string normalize_whitespace(const std::string& text);

// Reads `annotation_file` and checks it: known keys only; a known verdict; a non-empty summary; an
// implication unless the verdict is clean; at least one quote unless it is clean; each quote's file
// a relative path to a regular file inside `run_dir` (no "..", no absolute path, no symlink out),
// its lines "A-B" or "A" within the file with A <= B, and its text (whitespace-normalised) found
// within those lines (whitespace-normalised). Never throws for a bad file: everything is an issue.
HandAnnotationCheck validate_hand_annotation(const std::filesystem::path& annotation_file,
                                             const std::filesystem::path& run_dir);

nlohmann::json to_json(const HandAnnotationCheck& c);

}  // namespace kb
