#include "core/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

namespace kb {
namespace {

using json = nlohmann::json;

// A header larger than this is refused when reading (the reference implementation's limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const std::pair<DType, const char*> kNames[] = {
    {DType::f64, "F64"}, {DType::f32, "F32"}, {DType::f16, "F16"},         {DType::bf16, "BF16"},
    {DType::e4m3, "F8_E4M3"}, {DType::e5m2, "F8_E5M2"}, {DType::i64, "I64"}, {DType::i32, "I32"},
    {DType::i16, "I16"}, {DType::i8, "I8"},   {DType::u8, "U8"},
};

uint64_t numel_checked(const std::vector<int64_t>& shape, const std::string& name) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw SafetensorsError(fmt::format("tensor '{}': negative dimension {} in its shape", name, d));
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

}  // namespace

std::string safetensors_dtype(DType t) {
  for (const auto& [d, n] : kNames)
    if (d == t) return n;
  throw SafetensorsError(fmt::format("dtype {} has no safetensors name", name(t)));
}

std::optional<DType> dtype_from_safetensors(const std::string& s) {
  for (const auto& [d, n] : kNames)
    if (s == n) return d;
  return std::nullopt;
}

std::string encode_safetensors_header(const SafetensorsFile& file) {
  json header = json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& t : file.tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      throw SafetensorsError(fmt::format("tensor name '{}' is not allowed", t.name));
    if (!names.insert(t.name).second) throw SafetensorsError(fmt::format("two tensors named '{}'", t.name));
    const uint64_t expected = numel_checked(t.shape, t.name) * element_bytes(t.dtype);
    if (t.bytes.size() != expected)
      throw SafetensorsError(fmt::format("tensor '{}': {} bytes given, its dtype and shape need {}", t.name,
                                         t.bytes.size(), expected));
    header[t.name] = {{"dtype", safetensors_dtype(t.dtype)}, {"shape", t.shape},
                      {"data_offsets", json::array({offset, offset + t.bytes.size()})}};
    offset += t.bytes.size();
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // JSON allows trailing whitespace; keeps the data aligned
  const uint64_t n = text.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + text;
}

std::vector<std::byte> encode_safetensors(const SafetensorsFile& file) {
  const std::string head = encode_safetensors_header(file);
  size_t total = head.size();
  for (const auto& t : file.tensors) total += t.bytes.size();
  std::vector<std::byte> out(total);
  std::memcpy(out.data(), head.data(), head.size());
  size_t at = head.size();
  for (const auto& t : file.tensors) {
    if (!t.bytes.empty()) std::memcpy(out.data() + at, t.bytes.data(), t.bytes.size());
    at += t.bytes.size();
  }
  return out;
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  const auto bytes = encode_safetensors(file);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw SafetensorsError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw SafetensorsError(fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
}

SafetensorsFile decode_safetensors(const std::vector<std::byte>& bytes) {
  if (bytes.size() < 8)
    throw SafetensorsError(fmt::format("{} bytes: too short for the 8-byte header length", bytes.size()));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(bytes[static_cast<size_t>(i)]) << (8 * i);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8)
    throw SafetensorsError(fmt::format("header length {} does not fit the file ({} bytes)", n, bytes.size()));
  const std::string text(reinterpret_cast<const char*>(bytes.data()) + 8, static_cast<size_t>(n));
  const json header = json::parse(text, nullptr, false);
  if (header.is_discarded() || !header.is_object()) throw SafetensorsError("the header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - n;
  const std::byte* data = bytes.data() + 8 + n;

  SafetensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw SafetensorsError("__metadata__ is not an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw SafetensorsError(fmt::format("__metadata__.{} is not a string", k));
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const auto field = [&](const char* key) -> const json& {
      if (!entry.is_object() || !entry.contains(key))
        throw SafetensorsError(fmt::format("tensor '{}': no \"{}\" in its header entry", name, key));
      return entry.at(key);
    };
    SafetensorsTensor t;
    t.name = name;
    const json& dtype = field("dtype");
    auto parsed = dtype.is_string() ? dtype_from_safetensors(dtype.get<std::string>()) : std::nullopt;
    if (!parsed) throw SafetensorsError(fmt::format("tensor '{}': unsupported dtype {}", name, dtype.dump()));
    t.dtype = *parsed;
    const json& shape = field("shape");
    if (!shape.is_array()) throw SafetensorsError(fmt::format("tensor '{}': shape is not an array", name));
    for (const auto& d : shape) {
      if (!d.is_number_integer()) throw SafetensorsError(fmt::format("tensor '{}': shape {} is not integers", name, shape.dump()));
      t.shape.push_back(d.get<int64_t>());
    }
    const json& offsets = field("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      throw SafetensorsError(fmt::format("tensor '{}': data_offsets {} is not [begin, end]", name, offsets.dump()));
    const uint64_t begin = offsets[0], end = offsets[1];
    if (begin > end || end > data_size)
      throw SafetensorsError(fmt::format("tensor '{}': data_offsets [{}, {}] outside the {} data bytes", name, begin,
                                         end, data_size));
    const uint64_t need = numel_checked(t.shape, name) * element_bytes(t.dtype);
    if (end - begin != need)
      throw SafetensorsError(fmt::format("tensor '{}': data_offsets hold {} bytes, dtype {} and shape {} need {}", name,
                                         end - begin, dtype.get<std::string>(), shape.dump(), need));
    t.bytes.assign(data + begin, data + end);
    spans.emplace_back(begin, end);
    file.tensors.push_back(std::move(t));
  }
  // The data must be covered exactly: sorted spans that touch end to start, from 0 to the end.
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  uint64_t at = 0;
  for (size_t i : order) {
    if (spans[i].first != at)
      throw SafetensorsError(fmt::format("tensor '{}' starts at data byte {}, expected {} (a gap or an overlap)",
                                         file.tensors[i].name, spans[i].first, at));
    at = spans[i].second;
  }
  if (at != data_size)
    throw SafetensorsError(fmt::format("{} data bytes after the last tensor", data_size - at));
  std::vector<SafetensorsTensor> sorted;
  for (size_t i : order) sorted.push_back(std::move(file.tensors[i]));
  file.tensors = std::move(sorted);
  return file;
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SafetensorsError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(raw.size());
  if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
  try {
    return decode_safetensors(bytes);
  } catch (const SafetensorsError& e) {
    throw SafetensorsError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace kb
