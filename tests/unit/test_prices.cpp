// The price table kbench ships (prices/models.toml): every number has its source and date, and a
// run's cost is computed from it (agent/gateway/prices.h).
#include <gtest/gtest.h>

#include <regex>

#include <toml++/toml.h>

#include "agent/gateway/prices.h"

namespace fs = std::filesystem;
using namespace kb;
using namespace kb::gateway;

namespace {
const fs::path kTable = fs::path(KBENCH_SOURCE_DIR) / "prices/models.toml";
}

TEST(ShippedPrices, LoadAndSayWhereEachPriceWasReadAndWhen) {
  const PriceTable t = PriceTable::load(kTable);
  ASSERT_FALSE(t.empty());
  const toml::table doc = toml::parse_file(kTable.string());
  const std::regex url(R"(https://[^ ,]+)"), date(R"(\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b)");
  size_t n = 0;
  for (const auto& [name, _] : *doc["models"].as_table()) {
    const ModelPrice* p = t.find(std::string(name.str()));
    ASSERT_NE(p, nullptr) << name.str();
    EXPECT_TRUE(std::regex_search(p->source, url)) << name.str() << ": no URL in " << p->source;
    EXPECT_TRUE(std::regex_search(p->source, date)) << name.str() << ": no date in " << p->source;
    EXPECT_GT(p->input, 0) << name.str();
    EXPECT_GT(p->output, p->input) << name.str() << ": output tokens cost more than input at every provider listed";
    if (p->cache_read) {
      EXPECT_LT(*p->cache_read, p->input) << name.str() << ": a cache hit is cheaper than input";
    }
    ++n;
  }
  EXPECT_GE(n, 5u);
}

TEST(ShippedPrices, PriceARunsTokensByKind) {
  const PriceTable t = PriceTable::load(kTable);
  // Claude Sonnet 4 at $3 in / $15 out / $0.30 cache read / $3.75 cache write per Mtok.
  Usage u;
  u.input_tokens = 2'000'000;
  u.output_tokens = 100'000;
  u.cache_read_tokens = 10'000'000;
  u.cache_write_tokens = 400'000;
  const Cost c = t.cost(u, {"claude-sonnet-4-0"});
  ASSERT_TRUE(c.usd) << c.note;
  EXPECT_NEAR(*c.usd, 2 * 3.0 + 0.1 * 15.0 + 10 * 0.30 + 0.4 * 3.75, 1e-9);
  EXPECT_NE(c.source.find("docs.anthropic.com"), std::string::npos) << c.source;
  const Cost unknown = t.cost(u, {"some-unlisted-model"});
  EXPECT_FALSE(unknown.usd);
  EXPECT_NE(unknown.note.find("not in the price table"), std::string::npos) << unknown.note;
}

TEST(ShippedPrices, AreTheDefaultUnlessKbenchPricesSaysOtherwise) {
  unsetenv("KBENCH_PRICES");
  EXPECT_EQ(fs::canonical(default_price_table()), fs::canonical(kTable));
  setenv("KBENCH_PRICES", "/elsewhere/prices.toml", 1);
  EXPECT_EQ(default_price_table(), fs::path("/elsewhere/prices.toml"));
  unsetenv("KBENCH_PRICES");
}
