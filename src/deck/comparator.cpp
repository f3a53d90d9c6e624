#include "deck/comparator.h"

#include <map>
#include <stdexcept>

namespace kb {
namespace {

// A function-local static: registrars run during static initialisation of other translation units.
std::map<std::string, ComparatorInfo>& comparators() {
  static std::map<std::string, ComparatorInfo> m;
  return m;
}

}  // namespace

void register_comparator(const std::string& name, ComparatorFn fn, const std::string& rule) {
  if (!comparators().emplace(name, ComparatorInfo{fn, rule}).second)
    throw std::logic_error("two comparators registered under the name '" + name + "'");
}

const ComparatorInfo* find_comparator(const std::string& name) {
  auto it = comparators().find(name);
  return it == comparators().end() ? nullptr : &it->second;
}

std::vector<std::string> comparator_names() {
  std::vector<std::string> names;
  for (const auto& [name, info] : comparators()) names.push_back(name);
  return names;
}

}  // namespace kb
