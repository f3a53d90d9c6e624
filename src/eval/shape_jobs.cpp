#include "eval/shape_jobs.h"

#include <algorithm>

namespace kb {

size_t shape_jobs(size_t asked, bool bench, bool python, unsigned hardware_threads) {
  if (bench || python) return 1;
  if (asked >= 1) return asked;
  return std::clamp<size_t>(hardware_threads / 4, 1, kAutoShapeJobsMax);
}

bool shape_may_start(size_t running, uint64_t running_bytes, uint64_t shape_bytes, size_t jobs) {
  if (running == 0) return true;  // however large: alone
  if (running >= jobs) return false;
  return running_bytes + shape_bytes <= kShapeJobsBytes;
}

}  // namespace kb
