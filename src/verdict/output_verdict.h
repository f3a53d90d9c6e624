// The verdict on one output of one call: the elementwise judge's (eval/judge.h) and a problem's
// comparator's (deck/comparator.h), with the worst elements as evidence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verdict/reason.h"

namespace kb {

struct ElementError {
  int64_t index = 0;
  std::vector<int64_t> coords;
  double expected = 0, got = 0;
  double abs_err = 0, rel_err = 0, ulp_err = 0;
  double excess = 0;  // error / allowed error (> 1 fails); +inf for NaN/unwritten
};

struct OutputVerdict {
  std::string output;
  bool pass = true;
  Reason failure = Reason::none;  // none | unwritten | nan | mismatch | rel_l2 (| comparator)
  int64_t checked = 0;        // elements compared
  int64_t failed = 0;         // elementwise failures (unwritten included)
  int64_t unwritten = 0;      // elements still holding the poison
  double max_abs_err = 0, max_rel_err = 0, max_ulp_err = 0, rel_l2 = 0;
  std::vector<ElementError> worst;  // up to 5, worst first
  std::string message;        // human explanation when failing
};

}  // namespace kb
