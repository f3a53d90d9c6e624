// Recursive-descent parser and evaluator for the expression language of expr.h.
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := number | name | function '(' expr ',' expr ')' | '(' expr ')'
//
// Positions in ExprError::position() are 0-based offsets; the message shows them 1-based, as a
// column a person counts ("at position 7" is the 7th character, or just past the end of a
// 6-character text), which is what an editor shows.
#include "core/expr.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>

namespace kb {

enum class Fn { ceil_div, min, max };

struct Expr::Node {
  enum class Kind { number, name, neg, add, sub, mul, div, call };
  Kind kind = Kind::number;
  double value = 0;                          // number
  std::string name;                          // name, or the function's name for call
  Fn fn = Fn::min;                           // call
  std::vector<std::shared_ptr<const Node>> args;  // operands (1 for neg, 2 otherwise)
  size_t pos = 0;                            // where the node starts in the text (operator for binary)
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;
using Kind = Expr::Node::Kind;

struct FnInfo {
  std::string_view name;
  Fn fn;
};
constexpr FnInfo kFunctions[] = {{"ceil_div", Fn::ceil_div}, {"min", Fn::min}, {"max", Fn::max}};
constexpr const char* kFunctionList = "ceil_div, min, max";

// Deep enough for any real formula; shallow enough that hostile input cannot overflow the stack.
constexpr int kMaxDepth = 200;

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// "1e+09" style output is confusing in messages; print integers as integers.
std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Mutable while the parser fills it in; stored as a pointer to const once built.
std::shared_ptr<Expr::Node> make(Kind kind, size_t pos, std::vector<NodePtr> args = {}) {
  auto n = std::make_shared<Expr::Node>();
  n->kind = kind;
  n->pos = pos;
  n->args = std::move(args);
  return n;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePtr parse_all() {
    NodePtr root = expr(0);
    skip_space();
    if (pos_ < text_.size())
      fail("an operator (+ - * /) or the end of the expression");
    return root;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;

  [[noreturn]] void fail(std::string_view expected) const {
    std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end";
    throw ExprError("expected " + std::string(expected) + " at position " + std::to_string(pos_ + 1) +
                        " in " + quoted(text_) + ", found " + found,
                    pos_);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!accept(c)) fail(std::string("'") + c + "'");
  }

  void check_depth(int depth) const {
    if (depth > kMaxDepth)
      throw ExprError("expression nested deeper than " + std::to_string(kMaxDepth) + " levels at position " +
                          std::to_string(pos_ + 1) + " in " + quoted(text_),
                      pos_);
  }

  NodePtr expr(int depth) {
    check_depth(depth);
    NodePtr lhs = term(depth);
    for (;;) {
      skip_space();
      const size_t at = pos_;
      if (accept('+')) lhs = make(Kind::add, at, {lhs, term(depth)});
      else if (accept('-')) lhs = make(Kind::sub, at, {lhs, term(depth)});
      else return lhs;  // left-associative: a - b - c == (a - b) - c
    }
  }

  NodePtr term(int depth) {
    NodePtr lhs = unary(depth);
    for (;;) {
      skip_space();
      const size_t at = pos_;
      if (accept('*')) lhs = make(Kind::mul, at, {lhs, unary(depth)});
      else if (accept('/')) lhs = make(Kind::div, at, {lhs, unary(depth)});
      else return lhs;
    }
  }

  NodePtr unary(int depth) {
    check_depth(depth);
    skip_space();
    const size_t at = pos_;
    if (accept('-')) return make(Kind::neg, at, {unary(depth + 1)});
    return primary(depth);
  }

  NodePtr primary(int depth) {
    skip_space();
    if (pos_ >= text_.size()) fail("a number, a name or '('");
    const char c = text_[pos_];
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) return number();
    if (is_name_start(c)) return name_or_call(depth);
    if (accept('(')) {
      NodePtr inner = expr(depth + 1);
      expect(')');
      return inner;
    }
    fail("a number, a name or '('");
  }

  // digits [. digits] [e [+-] digits]; the span is validated by hand so that "1e" or "2." followed
  // by junk reports a position, then from_chars does the correctly rounded conversion.
  NodePtr number() {
    const size_t start = pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) fail("the digits of an exponent");
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    double value = 0;
    auto r = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (r.ec != std::errc() || !std::isfinite(value)) {
      pos_ = start;
      fail("a finite number");
    }
    auto n = make(Kind::number, start);
    n->value = value;
    return n;
  }

  NodePtr name_or_call(int depth) {
    const size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != '(') {
      auto n = make(Kind::name, start);
      n->name = std::move(name);
      return n;
    }
    const FnInfo* f = nullptr;
    for (const auto& e : kFunctions)
      if (e.name == name) f = &e;
    if (!f)
      throw ExprError("unknown function '" + name + "' at position " + std::to_string(start + 1) + " in " +
                          quoted(text_) + "; known functions: " + kFunctionList,
                      start);
    expect('(');
    NodePtr a = expr(depth + 1);
    expect(',');
    NodePtr b = expr(depth + 1);
    expect(')');
    auto n = make(Kind::call, start, {a, b});
    n->name = std::move(name);
    n->fn = f->fn;
    return n;
  }
};

class Evaluator {
 public:
  Evaluator(std::string_view text, const Variables& vars) : text_(text), vars_(vars) {}

  double eval(const Expr::Node& n) const {
    switch (n.kind) {
      case Kind::number: return n.value;
      case Kind::name: return lookup(n);
      case Kind::neg: return -eval(*n.args[0]);
      case Kind::add: return eval(*n.args[0]) + eval(*n.args[1]);
      case Kind::sub: return eval(*n.args[0]) - eval(*n.args[1]);
      case Kind::mul: return eval(*n.args[0]) * eval(*n.args[1]);
      case Kind::div: return divide(n, eval(*n.args[0]), eval(*n.args[1]));
      case Kind::call: return call(n, eval(*n.args[0]), eval(*n.args[1]));
    }
    return 0;  // unreachable: every kind is handled above
  }

 private:
  std::string_view text_;
  const Variables& vars_;

  [[noreturn]] void fail(const Expr::Node& n, const std::string& what) const {
    throw ExprError(what + " at position " + std::to_string(n.pos + 1) + " in " + quoted(text_), n.pos);
  }

  double lookup(const Expr::Node& n) const {
    auto it = vars_.find(n.name);
    if (it != vars_.end()) return it->second;
    std::string known;
    for (const auto& [k, v] : vars_) known += (known.empty() ? "" : ", ") + k;
    throw ExprError("unknown name '" + n.name + "' in " + quoted(text_) + "; known: " +
                        (known.empty() ? "(none)" : known),
                    n.pos);
  }

  double divide(const Expr::Node& n, double a, double b) const {
    if (b == 0) fail(n, "division by zero (" + number_text(a) + " / 0)");
    return a / b;
  }

  double call(const Expr::Node& n, double a, double b) const {
    switch (n.fn) {
      case Fn::min: return std::fmin(a, b);
      case Fn::max: return std::fmax(a, b);
      case Fn::ceil_div: return ceil_div(n, a, b);
    }
    return 0;  // unreachable
  }

  double ceil_div(const Expr::Node& n, double a, double b) const {
    if (a != std::floor(a) || b != std::floor(b) || !std::isfinite(a) || !std::isfinite(b))
      fail(n, "ceil_div needs integer arguments, got ceil_div(" + number_text(a) + ", " + number_text(b) + ")");
    if (b == 0) fail(n, "division by zero in ceil_div(" + number_text(a) + ", 0)");
    // Exact integer arithmetic where it fits: a double quotient could round onto an integer.
    constexpr double kLimit = 9.0e18;
    if (std::fabs(a) < kLimit && std::fabs(b) < kLimit) {
      const auto ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
      int64_t q = ia / ib;  // truncates toward zero
      if (ia % ib != 0 && ((ia < 0) == (ib < 0))) ++q;
      return static_cast<double>(q);
    }
    return std::ceil(a / b);
  }
};

void collect_names(const Expr::Node& n, std::set<std::string>& out) {
  if (n.kind == Kind::name) out.insert(n.name);
  for (const auto& a : n.args) collect_names(*a, out);
}

}  // namespace

Expr::Expr() : text_("0"), root_(make(Kind::number, 0)) {}

Expr Expr::parse(std::string_view text) {
  Expr e;
  e.root_ = Parser(text).parse_all();
  e.text_ = std::string(text);
  return e;
}

double Expr::eval(const Variables& vars) const { return Evaluator(text_, vars).eval(*root_); }

std::vector<std::string> Expr::names() const {
  std::set<std::string> s;
  collect_names(*root_, s);
  return {s.begin(), s.end()};
}

}  // namespace kb
