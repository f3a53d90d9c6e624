#pragma once

#include <string>

#include "cli/app.h"
#include "deck/problem.h"

namespace kb::cli {

// Loads a problem by name (from the deck folder) or by folder path; UsageError naming the known
// problems when there is none.
Problem find_problem(const GlobalOptions& g, const std::string& name_or_path);

}  // namespace kb::cli
