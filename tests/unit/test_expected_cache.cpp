// The cache of the public seeds' expected outputs (eval/expected_cache.h): every input of the key
// changes it, so a stale file is never read; a damaged or foreign file is a miss; what it returns
// is what was stored.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "deck/problem.h"
#include "eval/expected_cache.h"
#include "test_support.h"

namespace kb {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;

const fs::path kSoftmax = fs::path(KBENCH_SOURCE_DIR) / "problems" / "softmax";

// A copy of the deck's softmax (its solutions left out) that a test may edit, and a cache folder.
class ExpectedCacheTest : public testing::Test {
 protected:
  ExpectedCacheTest() {
    testing_support::copy_problem_without_solutions(kSoftmax, problem_dir());
  }
  fs::path problem_dir() const { return work_.path() / "softmax"; }
  Problem problem() const { return load_problem(problem_dir()); }
  ExpectedCache cache(const std::string& device = "host | machine A", const std::string& version = "1.2.3",
                      const std::string& binary = "1:2:3:4", const std::string& target = "host") const {
    return ExpectedCache(cache_.path() / "expected", problem(), target, device, version, binary);
  }
  std::string key(const ExpectedCache& c, size_t shape = 0, uint64_t seed = 1) const { return c.key(shape, seed); }

  TempDir work_{"expected-cache-problem"};
  TempDir cache_{"expected-cache"};
};

TEST_F(ExpectedCacheTest, EveryInputOfTheKeyChangesIt) {
  const std::string base = key(cache());
  EXPECT_EQ(key(cache()), base) << "the same inputs must give the same key";
  EXPECT_NE(key(cache(), 1), base) << "another shape";
  EXPECT_NE(key(cache(), 0, 2), base) << "another seed";
  EXPECT_NE(key(cache("host | machine B")), base) << "another device";
  EXPECT_NE(key(cache("host | machine A", "1.2.4")), base) << "another kbench version";
  EXPECT_NE(key(cache("host | machine A", "1.2.3", "1:2:3:5")), base) << "a rebuilt kbench binary";
  EXPECT_NE(key(cache("host | machine A", "1.2.3", "1:2:3:4", "cuda")), base) << "another target";
  // The problem: any byte of its files (problem.toml's shapes, the oracle's source)...
  std::ofstream(problem_dir() / "problem.toml", std::ios::app) << "\n# changed\n";
  EXPECT_NE(key(cache()), base) << "a changed problem.toml";
  // ...but not a new solution.
  const std::string changed = key(cache());
  fs::create_directories(problem_dir() / "solutions" / "new");
  std::ofstream(problem_dir() / "solutions" / "new" / "solution.cpp") << "// a solution\n";
  EXPECT_EQ(key(cache()), changed);
}

TEST_F(ExpectedCacheTest, WhatIsStoredComesBackAndADamagedOrForeignFileIsAMiss) {
  const ExpectedCache c = cache();
  const std::string k = key(c);
  const std::vector<std::vector<double>> values = {{1.5, -2.25, 1e-300}, {3.0}};
  EXPECT_FALSE(c.load(k, {3, 1})) << "nothing stored yet";
  ASSERT_TRUE(c.store(k, values));
  const auto back = c.load(k, {3, 1});
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, values);
  EXPECT_FALSE(c.load(k, {3, 2})) << "other output sizes";
  EXPECT_FALSE(c.load(k, {3})) << "another output count";

  const fs::path file = cache_.path() / "expected" / (k + ".bin");
  ASSERT_TRUE(fs::is_regular_file(file));
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // One value's bit flipped: the checksum refuses it.
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x10;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << flipped;
  EXPECT_FALSE(c.load(k, {3, 1})) << "a damaged value must never be read";
  // Truncated.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 8);
  EXPECT_FALSE(c.load(k, {3, 1}));
  // Another key's file under this key's name.
  const std::string other = key(c, 0, 2);
  ASSERT_TRUE(c.store(other, values));
  fs::copy_file(cache_.path() / "expected" / (other + ".bin"), file, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(c.load(k, {3, 1})) << "a file must hold its own key";
}

TEST_F(ExpectedCacheTest, AnOffCacheAndAnOversizeCaseStoreNothing) {
  const ExpectedCache off(fs::path(), problem(), "host", "host | machine A", "1.2.3", "1:2:3:4");
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.store("k", {{1.0}}));
  EXPECT_FALSE(off.load("k", {1}));
  const ExpectedCache c = cache();
  const std::vector<std::vector<double>> huge = {std::vector<double>(kExpectedCacheMaxCaseBytes / sizeof(double) + 1)};
  EXPECT_FALSE(c.store(key(c), huge));
  EXPECT_FALSE(fs::exists(cache_.path() / "expected" / (key(c) + ".bin")));
}

TEST(RunningBinaryIdentity, NamesThisFile) {
  const std::string id = running_binary_identity();
  EXPECT_NE(id, "unknown");
  EXPECT_EQ(id, running_binary_identity());
  EXPECT_EQ(std::count(id.begin(), id.end(), ':'), 3) << id;
}

}  // namespace
}  // namespace kb
