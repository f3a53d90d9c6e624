// Budget durations as the command line takes them (--budget, --grace) and as prompts show them.
#include <gtest/gtest.h>

#include "agent/budget.h"

using namespace std::chrono_literals;
using kb::describe_duration;
using kb::parse_duration;

TEST(Duration, ParsesUnitsAndCombinations) {
  EXPECT_EQ(parse_duration("45m"), 45min);
  EXPECT_EQ(parse_duration("90s"), 90s);
  EXPECT_EQ(parse_duration("1h30m"), 90min);
  EXPECT_EQ(parse_duration("2.5s"), 2500ms);
  EXPECT_EQ(parse_duration("500ms"), 500ms);
  EXPECT_EQ(parse_duration("120"), 120s);  // a bare number is seconds
  EXPECT_EQ(parse_duration("10min"), 10min);
}

TEST(Duration, RejectsWhatIsNotADurationNamingIt) {
  for (const char* bad : {"", "45x", "m", "1h-5m", "0s", "1.2.3s", "10 m", "5s5"}) {
    try {
      parse_duration(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Duration, DescribesForPeople) {
  EXPECT_EQ(describe_duration(45min), "45 minutes");
  EXPECT_EQ(describe_duration(90min), "1 hour 30 minutes");
  EXPECT_EQ(describe_duration(1s), "1 second");
  EXPECT_EQ(describe_duration(61s), "1 minute 1 second");
  EXPECT_EQ(describe_duration(1500ms), "1500 ms");
}
