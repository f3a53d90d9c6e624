#include "eval/hand_annotation.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "eval/annotation.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// What a reader sees of a file's lines when a quote does not match them.
constexpr size_t kShownChars = 160;

std::string shorten(std::string s) {
  if (s.size() > kShownChars) s = s.substr(0, kShownChars - 3) + "...";
  return s;
}

class Validator {
 public:
  Validator(fs::path file, fs::path run_dir) : file_(std::move(file)), run_dir_(std::move(run_dir)) {}

  HandAnnotationCheck run() {
    std::ifstream in(file_, std::ios::binary);
    if (!in) return issue("", "cannot read the file"), std::move(out_);
    std::stringstream text;
    text << in.rdbuf();
    toml::table top;
    try {
      top = toml::parse(text.str(), file_.string());
    } catch (const toml::parse_error& e) {
      issue("", fmt::format("TOML syntax error at line {}, column {}: {}", e.source().begin.line,
                            e.source().begin.column, e.description()));
      return std::move(out_);
    }
    HandAnnotation a;
    for (const auto& [k, v] : top)
      if (k.str() != "verdict" && k.str() != "summary" && k.str() != "implication" && k.str() != "quotes")
        issue(std::string(k.str()), "unknown key; expected verdict, summary, implication and [[quotes]] (docs/annotations.md)");
    a.verdict = string_field(top, "verdict", "", true);
    if (!a.verdict.empty() && !is_annotation_verdict(a.verdict))
      issue("verdict", fmt::format("'{}' is not a verdict; expected one of clean, rubric_leak, reward_hack, "
                                   "interesting, bug", a.verdict));
    a.summary = string_field(top, "summary", "", true);
    // What a verdict other than clean needs (an implication, quotes) is asked only of a known one.
    const bool needs_evidence = is_annotation_verdict(a.verdict) && a.verdict != annotation_verdict::clean;
    a.implication = string_field(top, "implication", "", needs_evidence);
    if (const toml::node* q = top.get("quotes")) {
      const toml::array* arr = q->as_array();
      if (!arr) {
        issue("quotes", "expected an array of tables ([[quotes]] sections)");
      } else {
        for (size_t i = 0; i < arr->size(); ++i) a.quotes.push_back(quote(*arr->get(i), fmt::format("quotes[{}]", i)));
      }
    }
    if (a.quotes.empty() && needs_evidence)
      issue("quotes", fmt::format("a '{}' verdict needs at least one [[quotes]] entry: the verbatim evidence", a.verdict));
    out_.annotation = std::move(a);
    return std::move(out_);
  }

 private:
  void issue(std::string field, std::string message) {
    out_.issues.push_back({file_.string(), std::move(field), std::move(message)});
  }

  std::string string_field(const toml::table& t, const std::string& key, const std::string& prefix, bool required) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) issue(name, "required key is missing");
      return "";
    }
    if (!n->is_string()) {
      issue(name, "expected a string");
      return "";
    }
    std::string s = **n->as_string();
    if (required && normalize_whitespace(s).empty()) issue(name, "must not be empty");
    return s;
  }

  // One line number as written (an integer of any size): 1 .. 2^31 - 1, else an issue. A number
  // past int's range once wrapped silently (2^32 + 1 read as line 1) or threw out of std::stoi.
  bool line_number(int64_t v, bool overflowed, const std::string& written, const std::string& field, int& out) {
    if (overflowed || v < 1 || v > std::numeric_limits<int>::max()) {
      issue(field, fmt::format("line {} is out of range; expected 1 <= line <= the file's line count", written));
      return false;
    }
    out = static_cast<int>(v);
    return true;
  }

  bool line_number(const toml::node& n, const std::string& field, int& out) {
    const int64_t v = **n.as_integer();
    return line_number(v, false, std::to_string(v), field, out);
  }

  bool line_number(const std::string& digits, const std::string& field, int& out) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return line_number(v, ec != std::errc() || end != digits.data() + digits.size(), digits, field, out);
  }

  // "12-14", "12", 12 or [12, 14].
  bool parse_lines(const toml::node& n, const std::string& field, AnnotationQuote& q) {
    if (n.as_integer()) {
      if (!line_number(n, field, q.first)) return false;
      q.last = q.first;
    } else if (const auto* a = n.as_array(); a && a->size() >= 1 && a->size() <= 2 && a->is_homogeneous<int64_t>()) {
      if (!line_number(*a->get(0), field, q.first) || !line_number(*a->get(a->size() - 1), field, q.last)) return false;
    } else if (const auto* s = n.as_string()) {
      static const std::regex range(R"(\s*(\d+)\s*(?:-\s*(\d+)\s*)?)");
      std::smatch m;
      const std::string v = **s;
      if (!std::regex_match(v, m, range)) {
        issue(field, fmt::format("'{}' is not a line range; expected \"A-B\" or \"A\" (1-based, inclusive)", v));
        return false;
      }
      if (!line_number(m[1].str(), field, q.first)) return false;
      if (!m[2].matched) q.last = q.first;
      else if (!line_number(m[2].str(), field, q.last)) return false;
    } else {
      issue(field, "expected a line range: \"A-B\" or \"A\" (1-based, inclusive)");
      return false;
    }
    if (q.last < q.first) {
      issue(field, fmt::format("lines {}-{}: expected 1 <= first <= last", q.first, q.last));
      return false;
    }
    return true;
  }

  // The quoted file inside the run directory, or nullopt (with an issue) when it may not be read.
  std::optional<fs::path> resolve(const std::string& rel, const std::string& field) {
    const fs::path p(rel);
    if (rel.empty()) return std::nullopt;  // already reported as missing/empty
    if (p.is_absolute()) {
      issue(field, fmt::format("'{}' is absolute; expected a path relative to the run directory", rel));
      return std::nullopt;
    }
    for (const auto& part : p)
      if (part == "..") {
        issue(field, fmt::format("'{}' leaves the run directory; expected a path inside it", rel));
        return std::nullopt;
      }
    std::error_code ec;
    const fs::path full = run_dir_ / p;
    if (!fs::is_regular_file(full, ec)) {
      issue(field, fmt::format("'{}' is not a file of the run directory {}", rel, run_dir_.string()));
      return std::nullopt;
    }
    const fs::path real = fs::weakly_canonical(full, ec), root = fs::weakly_canonical(run_dir_, ec);
    const auto rel_real = real.lexically_relative(root);
    if (rel_real.empty() || *rel_real.begin() == "..") {
      issue(field, fmt::format("'{}' resolves outside the run directory (a symbolic link)", rel));
      return std::nullopt;
    }
    return full;
  }

  AnnotationQuote quote(const toml::node& n, const std::string& path) {
    AnnotationQuote q;
    const toml::table* t = n.as_table();
    if (!t) {
      issue(path, "expected a table with file, lines and text");
      return q;
    }
    for (const auto& [k, v] : *t)
      if (k.str() != "file" && k.str() != "lines" && k.str() != "label" && k.str() != "text")
        issue(path + "." + std::string(k.str()), "unknown key; expected file, lines, label and text");
    q.file = string_field(*t, "file", path, true);
    q.label = string_field(*t, "label", path, false);
    q.text = string_field(*t, "text", path, true);
    const toml::node* lines = t->get("lines");
    bool lines_ok = false;
    if (!lines) issue(path + ".lines", "required key is missing");
    else lines_ok = parse_lines(*lines, path + ".lines", q);
    const auto file = resolve(q.file, path + ".file");
    if (!file || !lines_ok || normalize_whitespace(q.text).empty()) return q;

    std::ifstream in(*file, std::ios::binary);
    std::vector<std::string> all;
    for (std::string l; std::getline(in, l);) all.push_back(std::move(l));
    if (q.last > static_cast<int>(all.size())) {
      issue(path + ".lines", fmt::format("lines {}-{} run past the end of {} ({} lines)", q.first, q.last, q.file, all.size()));
      return q;
    }
    std::string span;
    for (int i = q.first; i <= q.last; ++i) span += all[static_cast<size_t>(i - 1)] + "\n";
    const std::string want = normalize_whitespace(q.text), have = normalize_whitespace(span);
    if (have.find(want) == std::string::npos)
      issue(path + ".text", fmt::format("the text is not in {} at lines {}-{} (whitespace ignored); those lines read: "
                                        "\"{}\"; the quote reads: \"{}\"",
                                        q.file, q.first, q.last, shorten(have), shorten(want)));
    return q;
  }

  fs::path file_, run_dir_;
  HandAnnotationCheck out_;
};

}  // namespace

std::string normalize_whitespace(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

HandAnnotationCheck validate_hand_annotation(const fs::path& annotation_file, const fs::path& run_dir) {
  return Validator(annotation_file, run_dir).run();
}

nlohmann::json to_json(const HandAnnotationCheck& c) {
  nlohmann::json issues = nlohmann::json::array();
  for (const auto& i : c.issues) issues.push_back({{"file", i.file}, {"field", i.field}, {"message", i.message}});
  nlohmann::json j = {{"valid", c.valid()}, {"issues", issues}, {"annotation", nullptr}};
  if (c.annotation) {
    nlohmann::json quotes = nlohmann::json::array();
    for (const auto& q : c.annotation->quotes)
      quotes.push_back({{"file", q.file}, {"lines", fmt::format("{}-{}", q.first, q.last)}, {"label", q.label}, {"text", q.text}});
    j["annotation"] = {{"verdict", c.annotation->verdict}, {"summary", c.annotation->summary},
                       {"implication", c.annotation->implication}, {"quotes", quotes}};
  }
  return j;
}

}  // namespace kb
