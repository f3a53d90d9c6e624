// A parent <-> worker message that lacks a field, or holds one of the wrong type (protocol/messages.h).
#pragma once

#include <stdexcept>

namespace kb {

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kb
