// Printing an evaluation for a person: a verdict table, failures explained.
#pragma once

#include <ostream>

#include "eval/result.h"

namespace kb::cli {

void print_result(std::ostream& out, const EvalResult& r, bool color);

}  // namespace kb::cli
