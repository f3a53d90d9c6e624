// Validators for kbench's numeric options. CLI11 alone reads "0.5" into an integer option as 0,
// "1e30" as 1 and "-5" into an unsigned one as 2^64-5, and its Range lets NaN through; these parse
// the whole text, refuse what is not finite or out of range, and say the unit. A refused value is
// a usage error (exit 2) whose message names the option (CLI11 prefixes it).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace kb::cli {

// A real number in [min, max], in `unit` (e.g. "seconds").
CLI::Validator number_in(double min, double max, const std::string& unit);
// A whole number in [min, max] (no fraction, no exponent, no sign unless min < 0).
CLI::Validator whole_in(long long min, long long max, const std::string& unit);
// Seconds (a real number in [min, max]) rewritten as whole milliseconds, for options stored as
// std::chrono::milliseconds.
CLI::Validator seconds_as_ms(double min, double max);

// A size in bytes with an optional binary unit (K, M, G, T, also written KiB, MiB, GiB, TiB; e.g.
// "64M", "1.5G", "4096") in [min, max] bytes, rewritten as the whole number of bytes for options
// stored as integers.
CLI::Validator bytes_in(uint64_t min, uint64_t max);

}  // namespace kb::cli
