// Reading a message's fields (protocol/messages.h, protocol/timing_policy.h): every read names the
// message and the field when the field is missing or of the wrong type (ProtocolError).
#pragma once

#include <fmt/format.h>

#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "protocol/protocol_error.h"

namespace kb::wire {

template <class T>
T field(const nlohmann::json& j, const char* message, const char* name) {
  if (!j.is_object()) throw ProtocolError(fmt::format("the {} is not a JSON object", message));
  const auto it = j.find(name);
  if (it == j.end()) throw ProtocolError(fmt::format("the {} has no field '{}'", message, name));
  const auto wrong = [&](const std::string& why) {
    return ProtocolError(fmt::format("field '{}' of the {} has the wrong type: {}", name, message, why));
  };
  // nlohmann::json converts between number kinds silently: a message's integers must be integers
  // (and not negative where unsigned), its booleans booleans.
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) throw wrong(fmt::format("expected a boolean, got {}", it->type_name()));
  } else if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_integer()) throw wrong(fmt::format("expected an integer, got {}", it->type_name()));
    if (std::is_unsigned_v<T> && !it->is_number_unsigned() && it->template get<int64_t>() < 0)
      throw wrong("expected a non-negative integer");
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!it->is_number()) throw wrong(fmt::format("expected a number, got {}", it->type_name()));
  }
  try {
    return it->template get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw wrong(e.what());
  } catch (const ProtocolError& e) {  // a nested message (a list of records)
    throw ProtocolError(fmt::format("field '{}' of the {}: {}", name, message, e.what()));
  }
}

// An optional field: `fallback` when absent; a present field of the wrong type is still refused.
template <class T>
T field_or(const nlohmann::json& j, const char* message, const char* name, T fallback) {
  if (j.is_object() && !j.contains(name)) return fallback;
  return field<T>(j, message, name);
}

}  // namespace kb::wire
