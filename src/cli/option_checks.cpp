#include "cli/option_checks.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kb::cli {

namespace {

// The whole text as a finite double; false for anything else (empty, trailing text, NaN, inf).
bool parse_real(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
}

std::string range_text(double min, double max, const std::string& unit) {
  return fmt::format("from {} to {} {}", min, max, unit);
}

}  // namespace

CLI::Validator number_in(double min, double max, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        if (!parse_real(s, v) || v < min || v > max)
          return fmt::format("expected a number {}, found '{}'", range_text(min, max, unit), s);
        return "";
      },
      fmt::format("NUMBER {}", range_text(min, max, unit)));
}

CLI::Validator whole_in(long long min, long long max, const std::string& unit) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        bool digits = !s.empty();
        for (size_t i = 0; i < s.size(); ++i)
          if (!std::isdigit(static_cast<unsigned char>(s[i])) && !(i == 0 && s[i] == '-' && min < 0 && s.size() > 1)) digits = false;
        errno = 0;
        const long long v = digits ? std::strtoll(s.c_str(), nullptr, 10) : 0;
        if (!digits || errno == ERANGE || v < min || v > max)
          return fmt::format("expected a whole number from {} to {} {}, found '{}'", min, max, unit, s);
        return "";
      },
      fmt::format("INTEGER from {} to {} {}", min, max, unit));
}

CLI::Validator seconds_as_ms(double min, double max) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        if (!parse_real(s, v) || v < min || v > max)
          return fmt::format("expected a number {}, found '{}'", range_text(min, max, "seconds"), s);
        s = std::to_string(std::llround(v * 1000));
        return "";
      },
      fmt::format("SECONDS from {} to {}", min, max));
}

CLI::Validator bytes_in(uint64_t min, uint64_t max) {
  const std::string range = fmt::format("from {} to {} bytes", min, max);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        // The number, then at most one unit letter, optionally followed by "iB" or "B".
        size_t unit_at = s.size();
        while (unit_at > 0 && std::isalpha(static_cast<unsigned char>(s[unit_at - 1]))) --unit_at;
        const std::string number = s.substr(0, unit_at), unit = s.substr(unit_at);
        static const std::pair<const char*, double> kUnits[] = {
            {"", 1},         {"B", 1},           {"K", 0x1p10},       {"KB", 0x1p10}, {"KiB", 0x1p10},
            {"M", 0x1p20},   {"MB", 0x1p20},     {"MiB", 0x1p20},     {"G", 0x1p30},  {"GB", 0x1p30},
            {"GiB", 0x1p30}, {"T", 0x1p40},      {"TB", 0x1p40},      {"TiB", 0x1p40}};
        double scale = 0, v = 0;
        for (const auto& [name, factor] : kUnits)
          if (unit == name) scale = factor;
        if (scale == 0 || !parse_real(number, v) || !std::isfinite(v * scale) || v * scale < static_cast<double>(min) ||
            v * scale > static_cast<double>(max))
          return fmt::format("expected a size {} (a number with K, M, G or T), found '{}'", range, s);
        s = std::to_string(static_cast<uint64_t>(std::llround(v * scale)));
        return "";
      },
      fmt::format("SIZE {} (K, M, G, T: powers of 1024)", range));
}

}  // namespace kb::cli
