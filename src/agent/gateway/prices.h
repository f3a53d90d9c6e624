// The price table the gateway computes costs from (docs/gateway.md): a TOML file, one table per
// model, US dollars per million tokens, each model's prices with the source they were taken from.
//
//   [models."claude-sonnet-4-5"]
//   input = 3.0          # $/Mtok, uncached prompt tokens
//   output = 15.0        # $/Mtok, generated tokens (reasoning included)
//   cache_read = 0.30    # optional: $/Mtok, prompt tokens read from the cache
//   cache_write = 3.75   # optional: $/Mtok, prompt tokens written to the cache
//   source = "https://... (checked 2025-10-01)"
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "agent/transcript.h"

namespace kb::gateway {

struct ModelPrice {
  double input = 0, output = 0;
  std::optional<double> cache_read, cache_write;
  std::string source;
};

struct Cost {
  std::optional<double> usd;
  std::string source;  // where the figure comes from; empty when there is none
  std::string note;    // why there is no figure
};

// The price table kbench ships (prices/models.toml of the data folder, core/data_dir.h), or $KBENCH_PRICES; empty
// when neither exists.
std::filesystem::path default_price_table();

class PriceTable {
 public:
  PriceTable() = default;
  // Throws std::invalid_argument naming the file, the model and the field.
  static PriceTable load(const std::filesystem::path& file);
  const ModelPrice* find(const std::string& model) const;
  // The cost of one exchange: the provider's billed cost when it reported one (usage.cost_usd),
  // else the table's prices for `model` (the first of the names given that the table knows).
  Cost cost(const Usage& u, const std::vector<std::string>& models) const;
  const std::filesystem::path& file() const { return file_; }
  bool empty() const { return models_.empty(); }

 private:
  std::filesystem::path file_;
  std::map<std::string, ModelPrice> models_;
};

}  // namespace kb::gateway
