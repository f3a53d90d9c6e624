#include <gtest/gtest.h>

#include <string>

#include "core/expr.h"

namespace kb {
namespace {

double ev(std::string_view text, const Variables& vars = {}) { return Expr::parse(text).eval(vars); }

// The ExprError of parsing (or, with vars, evaluating) text; fails the test if none is thrown.
ExprError error_of(std::string_view text, const Variables* vars = nullptr) {
  try {
    Expr e = Expr::parse(text);
    if (vars) e.eval(*vars);
  } catch (const ExprError& err) {
    return err;
  }
  ADD_FAILURE() << "no ExprError for \"" << text << "\"";
  return ExprError("", 0);
}

}  // namespace

TEST(Expr, PrecedenceAndParentheses) {
  EXPECT_EQ(ev("2 + 3 * 4"), 14);
  EXPECT_EQ(ev("(2 + 3) * 4"), 20);
  EXPECT_EQ(ev("2 * 3 + 4 * 5"), 26);
  EXPECT_EQ(ev("1 + 6 / 3"), 3);
  EXPECT_EQ(ev("((7))"), 7);
}

TEST(Expr, LeftAssociativity) {
  EXPECT_EQ(ev("10 - 4 - 3"), 3);
  EXPECT_EQ(ev("64 / 4 / 2"), 8);
  EXPECT_EQ(ev("8 / 2 * 4"), 16);
  EXPECT_EQ(ev("1 - 2 + 3"), 2);
}

TEST(Expr, UnaryMinus) {
  EXPECT_EQ(ev("-3"), -3);
  EXPECT_EQ(ev("--3"), 3);
  EXPECT_EQ(ev("-2 * 3"), -6);
  EXPECT_EQ(ev("4 - -2"), 6);
  EXPECT_EQ(ev("-(1 + 2) * 2"), -6);
  EXPECT_EQ(ev("2 * -N", {{"N", 5}}), -10);
}

TEST(Expr, Literals) {
  EXPECT_EQ(ev("1e9"), 1e9);
  EXPECT_EQ(ev("2.5"), 2.5);
  EXPECT_EQ(ev(".5"), 0.5);
  EXPECT_EQ(ev("3."), 3.0);
  EXPECT_EQ(ev("1.5E-3"), 1.5e-3);
  EXPECT_EQ(ev("2e+2"), 200);
  EXPECT_EQ(ev("  42  "), 42);
}

TEST(Expr, NamesAndFunctions) {
  const Variables v{{"M", 100}, {"N", 7}, {"K", 64}};
  EXPECT_EQ(ev("2 * M * N * K", v), 2.0 * 100 * 7 * 64);
  EXPECT_EQ(ev("K / 2", v), 32);
  EXPECT_EQ(ev("ceil_div(M, 32)", v), 4);
  EXPECT_EQ(ev("ceil_div(64, 32)"), 2);
  EXPECT_EQ(ev("ceil_div(-7, 2)"), -3);
  EXPECT_EQ(ev("ceil_div(7, -2)"), -3);
  EXPECT_EQ(ev("min(M, N) + max(M, N)", v), 107);
  EXPECT_EQ(ev("max(min(1, 2), ceil_div(N, 2)) * 2", v), 8);
  EXPECT_EQ(ev("batch_size_2", {{"batch_size_2", 3}}), 3);
}

TEST(Expr, NamesAreSortedUniqueAndExcludeFunctions) {
  EXPECT_EQ(Expr::parse("N * M + ceil_div(M, K) - min(N, 2)").names(),
            (std::vector<std::string>{"K", "M", "N"}));
  EXPECT_TRUE(Expr::parse("1 + 2").names().empty());
}

TEST(Expr, DefaultIsZeroAndTextIsKept) {
  EXPECT_EQ(Expr().eval({}), 0);
  EXPECT_EQ(Expr::parse("2 * (M + N)").text(), "2 * (M + N)");
}

TEST(Expr, ParseErrorsNamePositionAndExpectation) {
  ExprError e = error_of("2*(M+N");
  EXPECT_EQ(e.position(), 6u);
  EXPECT_NE(std::string(e.what()).find("expected ')' at position 7 in \"2*(M+N\""), std::string::npos) << e.what();

  e = error_of("2 + * 3");
  EXPECT_EQ(e.position(), 4u);
  EXPECT_NE(std::string(e.what()).find("a number, a name or '('"), std::string::npos) << e.what();

  e = error_of("M N");
  EXPECT_EQ(e.position(), 2u);
  EXPECT_NE(std::string(e.what()).find("an operator"), std::string::npos) << e.what();

  EXPECT_EQ(error_of("").position(), 0u);
  EXPECT_EQ(error_of("1e").position(), 2u);
  EXPECT_EQ(error_of("3 $ 4").position(), 2u);
  EXPECT_EQ(error_of("min(1 2)").position(), 6u);
  EXPECT_EQ(error_of("min(1)").position(), 5u);
}

TEST(Expr, UnknownFunctionListsKnownOnes) {
  ExprError e = error_of("1 + floor(M, 2)");
  EXPECT_EQ(e.position(), 4u);
  EXPECT_NE(std::string(e.what()).find("unknown function 'floor'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("ceil_div, min, max"), std::string::npos) << e.what();
}

TEST(Expr, UnknownNameListsKnownOnes) {
  const Variables v{{"M", 1}, {"N", 2}, {"K", 3}};
  ExprError e = error_of("2*Q", &v);
  EXPECT_EQ(e.position(), 2u);
  EXPECT_EQ(std::string(e.what()), "unknown name 'Q' in \"2*Q\"; known: K, M, N");
}

TEST(Expr, DivisionByZero) {
  const Variables v{{"Z", 0}};
  ExprError e = error_of("4 / (Z * 2)", &v);
  EXPECT_EQ(e.position(), 2u);
  EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  EXPECT_THROW(ev("ceil_div(4, Z)", v), ExprError);
}

TEST(Expr, CeilDivRequiresIntegers) {
  const Variables none;
  ExprError e = error_of("ceil_div(2.5, 2)", &none);
  EXPECT_NE(std::string(e.what()).find("ceil_div needs integer arguments"), std::string::npos) << e.what();
  EXPECT_THROW(ev("ceil_div(4, 1.5)"), ExprError);
}

TEST(Expr, HostileNestingIsAnErrorNotACrash) {
  EXPECT_THROW(Expr::parse(std::string(100000, '(') + "1"), ExprError);
  EXPECT_THROW(Expr::parse(std::string(100000, '-') + "1"), ExprError);
}

}  // namespace kb
