#include "deck/prompt_claims.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace kb {
namespace fs = std::filesystem;

namespace {

// Whitespace runs as one space, paragraph breaks (a blank line) as '\n'; {{variables}} removed (they
// are rendered from problem.toml, not claims). Claims are quoted from the prompt's prose, which
// wraps lines anywhere.
std::string normalize(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "{{") == 0) {
      const size_t close = text.find("}}", i);
      if (close != std::string_view::npos) {
        i = close + 2;
        continue;
      }
    }
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      size_t newlines = 0, j = i;
      for (; j < text.size() && std::isspace(static_cast<unsigned char>(text[j])); ++j) newlines += text[j] == '\n';
      if (!out.empty()) out += newlines >= 2 ? '\n' : ' ';
      i = j;
      continue;
    }
    out += text[i++];
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string read_file(const fs::path& f, bool& ok) {
  std::ifstream in(f, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  s.erase(0, std::min(s.size(), s.find_first_not_of(' ')));
  return s;
}

struct Span {
  size_t begin, end;
};

// One statement the scan found, and where.
struct Finding {
  Span span;
  std::string what;
};

// The sentence [begin, end) around `pos`: up to '.', '!', '?', ':' or ';' followed by a space, or a
// paragraph break ('\n').
Span sentence_at(const std::string& t, size_t pos) {
  auto is_end = [&](size_t i) {
    if (t[i] == '\n') return true;
    return (t[i] == '.' || t[i] == '!' || t[i] == '?' || t[i] == ';' || t[i] == ':') && i + 1 < t.size() && t[i + 1] == ' ';
  };
  size_t b = pos;
  while (b > 0 && !is_end(b - 1)) --b;
  size_t e = pos;
  while (e < t.size() && !is_end(e)) ++e;
  return {b, std::min(t.size(), e + 1)};
}

std::vector<Finding> scan(const Problem& p, const std::string& t) {
  std::vector<Finding> found;
  auto add_all = [&](const std::regex& re, const std::string& what) {
    for (auto it = std::sregex_iterator(t.begin(), t.end(), re); it != std::sregex_iterator(); ++it)
      found.push_back({{static_cast<size_t>(it->position()), static_cast<size_t>(it->position() + it->length())},
                       fmt::format("{} \"{}\"", what, it->str())});
  };
  // A dim with a value: "M = 32", "K = V = 128", "num_tokens = 16".
  for (const auto& d : p.dims) {
    std::string names;
    for (const auto& e : p.dims) names += (names.empty() ? "" : "|") + e;
    add_all(std::regex("\\b" + d + "(\\s*=\\s*(" + names + "))*\\s*=\\s*[0-9]"), "a dim's value");
  }
  // A sized model name: a family followed by a version or a size ("Llama-3-8B", "Qwen3-30B-A3B",
  // "Mixtral-8x7B", "DeepSeek-V2-Lite"); the family alone ("Kimi Linear's layer") names an
  // algorithm, not a shape.
  add_all(std::regex("\\b(Llama|Mixtral|Mistral|DeepSeek|Qwen|Gemma|GPT|Phi|Falcon|Kimi|Grok|OLMo|Yi)(-|[0-9])[A-Za-z0-9.\\-]*"),
          "a model name");
  add_all(std::regex("\\b([Dd]ecode|[Pp]refill)[a-z]*"), "a phase");
  // A number of something a shape counts: "16-token pages", "64 query heads", "128 experts".
  add_all(std::regex("\\b[0-9][0-9,.]*[ -](query |kv |KV )?(tokens?|heads?|experts?|pages?|sequences?|rows?|columns?)\\b"),
          "a counted dim");
  // Counts and ordinals in a sentence about the shapes: "one shape is", "the last two", "the big
  // shapes", "one long row".
  static const std::regex shape_word("\\bshapes?\\b");
  static const std::regex count_word(
      "\\b(one|two|three|four|five|six|seven|eight|single|first|second|third|fourth|fifth|last|smallest|largest|"
      "biggest|big|small|skinny|plain|labelled|labeled|long|longest|short|shortest|most|few|several|only)\\b",
      std::regex::icase);
  std::set<size_t> sentences;
  for (auto it = std::sregex_iterator(t.begin(), t.end(), shape_word); it != std::sregex_iterator(); ++it)
    sentences.insert(sentence_at(t, static_cast<size_t>(it->position())).begin);
  for (size_t b : sentences) {
    const Span s = sentence_at(t, b);
    const std::string text = t.substr(s.begin, s.end - s.begin);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), count_word); it != std::sregex_iterator(); ++it)
      found.push_back({{s.begin + static_cast<size_t>(it->position()), s.begin + static_cast<size_t>(it->position() + it->length())},
                       fmt::format("a count in a sentence about the shapes (\"{}\" in \"{}\")", it->str(), trimmed(text))});
  }
  return found;
}

class Checker {
 public:
  Checker(const Problem& p, std::string prompt_file, std::string claims_file, const std::string& prompt)
      : p_(p), prompt_file_(std::move(prompt_file)), claims_file_(std::move(claims_file)), text_(normalize(prompt)) {}

  std::vector<std::string> run(const toml::table& top) {
    for (const auto& [key, node] : top)
      if (key != "claim" && key != "exempt")
        error(fmt::format("{}: unknown key '{}' (known: claim, exempt)", claims_file_, key.str()));
    if (const auto* claims = top["claim"].as_array())
      for (size_t i = 0; i < claims->size(); ++i) {
        if (const auto* c = (*claims)[i].as_table()) claim(*c, i);
        else error(fmt::format("{}: claim {} is not a table", claims_file_, i + 1));
      }
    if (const auto* exempts = top["exempt"].as_array())
      for (size_t i = 0; i < exempts->size(); ++i) {
        const auto* e = (*exempts)[i].as_table();
        if (!e) {
          error(fmt::format("{}: exempt {} is not a table", claims_file_, i + 1));
          continue;
        }
        for (const auto& [key, node] : *e)
          if (key != "text" && key != "why")
            error(fmt::format("{}: exempt {}: unknown key '{}' (known: text, why)", claims_file_, i + 1, key.str()));
        const auto why = (*e)["why"].value<std::string>();
        if (!why || why->empty())
          error(fmt::format("{}: exempt {}: needs a `why` (what the text says, if not a claim about the shapes)", claims_file_, i + 1));
        quoted(*e, fmt::format("exempt {}", i + 1));
      }
    for (const auto& f : scan(p_, text_)) {
      const bool covered = std::any_of(covered_.begin(), covered_.end(),
                                       [&](const Span& s) { return s.begin <= f.span.begin && f.span.end <= s.end; });
      if (!covered)
        error(fmt::format("{}: {} is not checked: quote the statement in a [[claim]] of {} that problem.toml "
                          "bears out (or, if it is not about the shapes, in an [[exempt]] with its reason)",
                          prompt_file_, f.what, claims_file_));
    }
    return errors_;
  }

 private:
  void error(std::string m) { errors_.push_back(std::move(m)); }

  // The claim's text, found in the prompt; its spans are what it covers.
  std::string quoted(const toml::table& c, const std::string& which) {
    const auto text = c["text"].value<std::string>();
    if (!text || text->empty()) {
      error(fmt::format("{}: {}: needs a `text`, quoted from {}", claims_file_, which, prompt_file_));
      return "";
    }
    const std::string t = normalize(*text);
    bool found = false;
    for (size_t at = text_.find(t); at != std::string::npos; at = text_.find(t, at + 1)) {
      covered_.push_back({at, at + t.size()});
      found = true;
    }
    if (!found) error(fmt::format("{}: {} \"{}\": not in {} (quote it as the prompt says it)", claims_file_, which, t, prompt_file_));
    return t;
  }

  std::optional<size_t> dim_index(const std::string& name) const {
    for (size_t d = 0; d < p_.dims.size(); ++d)
      if (p_.dims[d] == name) return d;
    return std::nullopt;
  }

  // Whether shape s meets `where`; problems with the table itself are errors (reported once).
  bool meets(const toml::table& where, size_t s, const std::string& which) {
    const ShapeCase& shape = p_.shapes[s];
    bool ok = true;
    for (const auto& [key_, node] : where) {
      const std::string key(key_.str());
      if (key == "label") {
        const auto v = node.value<std::string>();
        if (!v) bad(which, "where.label must be a string");
        else ok = ok && p_.shape_label(s).find(*v) != std::string::npos;
      } else if (key == "labelled") {
        const auto v = node.value<bool>();
        if (!v) bad(which, "where.labelled must be true or false");
        else ok = ok && (!shape.label.empty()) == *v;
      } else if (key == "init") {
        const auto* t = node.as_table();
        if (!t) {
          bad(which, "where.init must be a table of tensor = distribution or generator");
          continue;
        }
        for (const auto& [tensor_, want_node] : *t) {
          const std::string tensor(tensor_.str());
          const TensorSpec* spec = nullptr;
          for (const auto* list : {&p_.inputs, &p_.weights})
            for (const auto& ts : *list)
              if (ts.name == tensor) spec = &ts;
          if (!spec) {
            bad(which, fmt::format("where.init.{}: not an input or weight of the problem", tensor));
            continue;
          }
          ok = ok && init_meets(p_.init_for(*spec, shape), want_node, fmt::format("where.init.{}", tensor), which);
        }
      } else if (const auto d = dim_index(key)) {
        const int64_t v = shape.dims[*d];
        if (const auto eq = node.value<int64_t>()) {
          ok = ok && v == *eq;
        } else if (const auto* t = node.as_table()) {
          for (const auto& [op_, arg] : *t) {
            const std::string op(op_.str());
            const auto a = arg.value<int64_t>();
            if (!a || ((op == "multiple_of" || op == "not_multiple_of") && *a <= 0)) {
              bad(which, fmt::format("where.{}.{} must be a (positive, for a multiple) integer", key, op));
              continue;
            }
            if (op == "min") ok = ok && v >= *a;
            else if (op == "max") ok = ok && v <= *a;
            else if (op == "multiple_of") ok = ok && v % *a == 0;
            else if (op == "not_multiple_of") ok = ok && v % *a != 0;
            else bad(which, fmt::format("where.{}: unknown test '{}' (known: min, max, multiple_of, not_multiple_of)", key, op));
          }
        } else {
          bad(which, fmt::format("where.{} must be an integer or a table of tests", key));
        }
      } else {
        bad(which, fmt::format("where: '{}' is neither a dim of the problem ({}) nor label, labelled or init", key,
                               fmt::join(p_.dims, ", ")));
      }
    }
    return ok;
  }

  // An init against "normal" (its distribution or generator), or against a table of that (`is`)
  // and its parameters: mean, std (normal), low, high (uniform), a generator's own; each a number
  // (equal) or a table of min, max. A parameter the init does not have does not match.
  bool init_meets(const InitSpec& init, const toml::node& want, const std::string& key, const std::string& which) {
    const std::string is = init.kind == InitSpec::Kind::generator ? init.generator
                           : init.kind == InitSpec::Kind::normal  ? "normal"
                                                                  : "uniform";
    if (const auto name = want.value<std::string>()) return is == *name;
    const auto* t = want.as_table();
    if (!t || !(*t)["is"].value<std::string>()) {
      bad(which, key + " must be a distribution or generator name, or a table with `is` and parameters");
      return false;
    }
    bool ok = (*t)["is"].value<std::string>() == is;
    std::map<std::string, double> params = init.params;
    if (init.kind == InitSpec::Kind::normal) params.insert({{"mean", init.mean}, {"std", init.std}});
    if (init.kind == InitSpec::Kind::uniform) params.insert({{"low", init.low}, {"high", init.high}});
    for (const auto& [name_, arg] : *t) {
      const std::string name(name_.str());
      if (name == "is") continue;
      const auto it = params.find(name);
      // A pointer rather than an optional: GCC's -Wmaybe-uninitialized misreads the optional's
      // storage once the whole layer is one translation unit (unity builds).
      const double* have = it == params.end() ? nullptr : &it->second;
      if (const auto eq = arg.value<double>()) {
        ok = ok && have != nullptr && *have == *eq;
      } else if (const auto* range = arg.as_table()) {
        for (const auto& [op_, bound] : *range) {
          const std::string op(op_.str());
          const auto b = bound.value<double>();
          if (!b || (op != "min" && op != "max")) {
            bad(which, fmt::format("{}.{}.{}: expected min or max with a number", key, name, op));
            continue;
          }
          ok = ok && have != nullptr && (op == "min" ? *have >= *b : *have <= *b);
        }
      } else {
        bad(which, fmt::format("{}.{} must be a number or a table of min, max", key, name));
      }
    }
    return ok;
  }

  void bad(const std::string& which, const std::string& what) {
    const std::string m = fmt::format("{}: {}: {}", claims_file_, which, what);
    if (std::find(errors_.begin(), errors_.end(), m) == errors_.end()) error(m);
  }

  void extreme(const toml::table& c, const char* key, const std::string& which, const std::string& quote) {
    const auto* t = c[key].as_table();
    if (!c[key]) return;
    if (!t) return bad(which, fmt::format("{} must be a table of dim = value", key));
    for (const auto& [dim_, node] : *t) {
      const std::string dim(dim_.str());
      const auto d = dim_index(dim);
      const auto want = node.value<int64_t>();
      if (!d || !want) {
        bad(which, fmt::format("{}.{}: not a dim of the problem, or not an integer", key, dim));
        continue;
      }
      int64_t have = p_.shapes.at(0).dims[*d];
      for (const auto& s : p_.shapes) have = std::string_view(key) == "min" ? std::min(have, s.dims[*d]) : std::max(have, s.dims[*d]);
      if (have != *want)
        error(fmt::format("{}: {} \"{}\": the {} {} over the shapes is {} in problem.toml, not {}", claims_file_, which, quote,
                          std::string_view(key) == "min" ? "smallest" : "largest", dim, have, *want));
    }
  }

  void claim(const toml::table& c, size_t i) {
    const std::string which = fmt::format("claim {}", i + 1);
    for (const auto& [key, node] : c)
      if (key != "text" && key != "shapes" && key != "where" && key != "min" && key != "max")
        bad(which, fmt::format("unknown key '{}' (known: text, shapes, where, min, max)", key.str()));
    const std::string quote = quoted(c, which);
    if (!c["where"] && !c["min"] && !c["max"])
      bad(which, "checks nothing: give `shapes` and `where`, or `min`/`max`");
    if (c["where"].is_table() != static_cast<bool>(c["shapes"]))
      bad(which, "`where` and `shapes` go together: the shapes where `where` holds, exactly");
    if (const auto* where = c["where"].as_table(); where && c["shapes"]) {
      std::set<size_t> want;
      if (c["shapes"].value<std::string>() == std::optional<std::string>("all")) {
        for (size_t s = 0; s < p_.shapes.size(); ++s) want.insert(s);
      } else if (const auto* list = c["shapes"].as_array()) {
        for (const auto& n : *list) {
          const auto s = n.value<int64_t>();
          if (!s || *s < 0 || *s >= static_cast<int64_t>(p_.shapes.size()))
            bad(which, fmt::format("shapes: {} is not a shape index (0 to {})", n.value<int64_t>().value_or(-1), p_.shapes.size() - 1));
          else want.insert(static_cast<size_t>(*s));
        }
      } else {
        bad(which, "shapes must be a list of shape indices or \"all\"");
      }
      std::set<size_t> have;
      for (size_t s = 0; s < p_.shapes.size(); ++s)
        if (meets(*where, s, which)) have.insert(s);
      if (have != want) {
        auto list = [&](const std::set<size_t>& v) {
          std::string out;
          for (size_t s : v) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s, p_.shape_label(s));
          return out.empty() ? std::string("none") : out;
        };
        error(fmt::format("{}: {} \"{}\": the claim is about shapes {} but in problem.toml it holds for {}", claims_file_,
                          which, quote, list(want), list(have)));
      }
    }
    extreme(c, "min", which, quote);
    extreme(c, "max", which, quote);
  }

  const Problem& p_;
  std::string prompt_file_, claims_file_;
  std::string text_;
  std::vector<Span> covered_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> check_prompt_claims(const Problem& p, const std::string& prompt, const std::string& claims_toml) {
  const std::string prompt_file = (p.dir / "prompt.md").string();
  const std::string claims_file = (p.dir / "prompt_claims.toml").string();
  toml::table top;
  try {
    top = toml::parse(claims_toml, claims_file);
  } catch (const toml::parse_error& e) {
    return {fmt::format("{}:{}:{}: TOML syntax error: {}", claims_file, e.source().begin.line, e.source().begin.column,
                        e.description())};
  }
  return Checker(p, prompt_file, claims_file, prompt).run(top);
}

std::vector<std::string> check_prompt_claims(const Problem& p) {
  bool ok_prompt = false, ok_claims = false;
  const std::string prompt = read_file(p.dir / "prompt.md", ok_prompt);
  const std::string claims = read_file(p.dir / "prompt_claims.toml", ok_claims);
  std::vector<std::string> errors;
  if (!ok_prompt) errors.push_back((p.dir / "prompt.md").string() + ": missing: every problem needs a prompt.md");
  if (!ok_claims)
    errors.push_back((p.dir / "prompt_claims.toml").string() +
                     ": missing: every problem needs one, listing what its prompt.md says about the shapes "
                     "(docs/problem-format.md)");
  if (!errors.empty()) return errors;
  return check_prompt_claims(p, prompt, claims);
}

}  // namespace kb
