// How many shapes a check judges at once (src/eval/shape_jobs.h).
#include <gtest/gtest.h>

#include "eval/shape_jobs.h"

namespace kb {
namespace {

TEST(ShapeJobs, AutomaticIsAQuarterOfTheThreadsWithinItsBoundsAndOneWithTiming) {
  EXPECT_EQ(shape_jobs(0, /*bench=*/false, /*python=*/false, 2), 1u);   // a 2-core CI machine: as before
  EXPECT_EQ(shape_jobs(0, false, false, 8), 2u);
  EXPECT_EQ(shape_jobs(0, false, false, 16), 4u);                       // a GPU machine of 16 cores
  EXPECT_EQ(shape_jobs(0, false, false, 128), kAutoShapeJobsMax);
  EXPECT_EQ(shape_jobs(0, false, false, 0), 1u);                        // unknown
  EXPECT_EQ(shape_jobs(3, false, false, 2), 3u);                        // asked: as asked
  // Timing needs the GPU to itself, and a Python solution's shapes share one Triton cache.
  EXPECT_EQ(shape_jobs(3, /*bench=*/true, false, 16), 1u);
  EXPECT_EQ(shape_jobs(0, false, /*python=*/true, 16), 1u);
}

TEST(ShapeJobs, AShapeStartsWhileThereIsRoomInJobsAndBytes) {
  EXPECT_TRUE(shape_may_start(0, 0, 100ull << 30, 4));  // alone, however large
  EXPECT_TRUE(shape_may_start(1, 1ull << 30, 1ull << 30, 4));
  EXPECT_FALSE(shape_may_start(4, 4, 1, 4));  // no job free
  EXPECT_FALSE(shape_may_start(1, 1ull << 30, kShapeJobsBytes, 4));  // would exceed the bytes together
  EXPECT_TRUE(shape_may_start(2, kShapeJobsBytes - 2, 2, 4));  // exactly at the bound
}

}  // namespace
}  // namespace kb
