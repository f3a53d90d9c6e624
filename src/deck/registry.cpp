#include "deck/registry.h"

#include "deck/gpu_reference.h"

#include <map>
#include <stdexcept>

namespace kb {
namespace {

// Function-local statics: registrars run during static initialisation of other translation units.
std::map<std::string, OracleFn>& oracles() {
  static std::map<std::string, OracleFn> m;
  return m;
}
std::map<std::string, GeneratorFn>& generators() {
  static std::map<std::string, GeneratorFn> m;
  return m;
}

std::map<std::string, GpuReferenceFn>& gpu_references() {
  static std::map<std::string, GpuReferenceFn> m;
  return m;
}

}  // namespace

void register_gpu_reference(const std::string& problem, GpuReferenceFn fn) {
  if (!gpu_references().emplace(problem, fn).second)
    throw std::logic_error("two GPU references registered for problem '" + problem + "'");
}

GpuReferenceFn find_gpu_reference(const std::string& problem) {
  auto it = gpu_references().find(problem);
  return it == gpu_references().end() ? nullptr : it->second;
}

void register_oracle(const std::string& problem, OracleFn fn) {
  if (!oracles().emplace(problem, fn).second)
    throw std::logic_error("two oracles registered for problem '" + problem + "'");
}

void register_generator(const std::string& name, GeneratorFn fn) {
  if (!generators().emplace(name, fn).second)
    throw std::logic_error("two input generators registered under the name '" + name + "'");
}

OracleFn find_oracle(const std::string& problem) {
  auto it = oracles().find(problem);
  return it == oracles().end() ? nullptr : it->second;
}

GeneratorFn find_generator(const std::string& name) {
  auto it = generators().find(name);
  return it == generators().end() ? nullptr : it->second;
}

std::vector<std::string> generator_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : generators()) names.push_back(name);
  return names;
}

}  // namespace kb
