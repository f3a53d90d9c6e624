#include "eval/annotate.h"

#include <fmt/format.h>

#include <algorithm>

namespace kb {
namespace {

// Evidence is for a reader: a handful of items makes the point, a hundred hides it.
constexpr size_t kMaxEvidence = 12;

// The message's first line, without the colon that introduces the list after it.
std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == ':' || l.back() == ' ')) l.pop_back();
  return l;
}

std::string counts(const std::map<std::string, size_t>& m) {
  std::string s;
  for (const auto& [k, n] : m) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", k, n);
  return s.empty() ? "none" : s;
}

std::string display_name(const SassKernel& k) { return k.demangled.empty() ? k.name : k.demangled; }

// What each kernel is made of: the facts behind a clean verdict, and the context of any other.
// A Python solution's kernel names the line of its Triton function; a kernel compiled several
// times alike (autotuning's configurations) is listed once.
void add_kernel_facts(const EvalResult& r, Annotation& a) {
  if (!r.sass || !r.sass->available) return;
  for (const auto& k : r.sass->listing.kernels) {
    if (a.evidence.size() >= kMaxEvidence) return;
    std::string text = fmt::format("{}: tensor cores {}; TMA {}", k.arch, counts(k.tensor_core()), counts(k.tma()));
    if (k.registers) text += fmt::format("; {} registers", *k.registers);
    if (k.count("STL") || k.count("LDL")) text += fmt::format("; local memory {} STL / {} LDL", k.count("STL"), k.count("LDL"));
    const bool listed = std::any_of(a.evidence.begin(), a.evidence.end(), [&](const Evidence& e) {
      return e.kind == "kernel" && e.kernel == k.name && e.text == text;
    });
    if (!listed) a.evidence.push_back({"kernel", k.source_file, k.source_line, k.name, text, display_name(k)});
  }
}

}  // namespace

Annotation annotate(const EvalResult& r) {
  const Finding& f = r.finding;
  const ReasonRow& row = reason_row(f.reason);
  Annotation a;
  a.verdict = annotation_verdict_name(row.annotation);
  a.failure = reason_name(f.reason);
  a.needs_review = row.needs_review;
  a.summary = row.meaning;
  if (f.failed() && !f.message.empty()) a.summary += " kbench: " + first_line(f.message);
  // The evidence the check kept where it found the failure; without any, kbench's own words.
  for (const auto& e : f.evidence)
    if (a.evidence.size() < kMaxEvidence) a.evidence.push_back(e);
  if (f.evidence.empty() && f.failed() && !f.message.empty())
    a.evidence.push_back({"message", "", 0, "", f.message, "kbench's message"});
  if (f.reason != Reason::missing_required_instruction) add_kernel_facts(r, a);
  return a;
}

}  // namespace kb
