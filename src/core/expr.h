// A small arithmetic expression language for problem.toml: flops/bytes formulas and symbolic
// tensor dims. Grammar: + - * / unary minus, parentheses, integer and float literals (1e9 too),
// names (dims, or other per-case variables), and the functions ceil_div(a, b), min(a, b), max(a, b).
// Evaluation is in double; `/` is real division, ceil_div(a, b) is ceil(a / b) for integers.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kb {

class ExprError : public std::runtime_error {
 public:
  ExprError(std::string message, size_t position)
      : std::runtime_error(std::move(message)), position_(position) {}
  size_t position() const { return position_; }  // 0-based offset into the expression text
 private:
  size_t position_;
};

using Variables = std::map<std::string, double, std::less<>>;

class Expr {
 public:
  Expr();  // the constant 0
  // Throws ExprError naming what was expected and where.
  static Expr parse(std::string_view text);
  // Throws ExprError on an unknown name or a division by zero.
  double eval(const Variables& vars) const;
  // Names the expression refers to (not function names), sorted, unique.
  std::vector<std::string> names() const;
  const std::string& text() const { return text_; }

  struct Node;  // implementation detail, defined in expr.cpp
 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace kb
