// `kbench dump PROBLEM --out FILE.safetensors`: one case as a file any framework can load: the
// inputs and weights exactly as a solution is handed them (drawn from the seeds), and the fp64
// oracle's expected outputs as float64 tensors named `expected.<output>`: whole, or with --rows
// only the rows asked for (and their indices, `expected.row_index`). For debugging a solution
// outside kbench, or checking a reference implementation elsewhere against kbench's oracle.
#include <fmt/format.h>

#include <cstring>
#include <iostream>
#include <set>

#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "cli/option_checks.h"
#include "core/json_text.h"
#include "core/safetensors.h"
#include "core/version.h"
#include "deck/generate.h"
#include "deck/registry.h"
#include "eval/comparator.h"
#include "eval/expected.h"
#include "core/atomic_file.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Above this many output elements, computing every row of the oracle may take a while on a CPU
// (a GEMM's oracle does K multiply-adds per element): say so, and how to ask for fewer rows.
constexpr int64_t kSlowOracleElements = int64_t{1} << 20;

struct DumpCommand {
  std::string problem;
  int64_t shape = 0;
  uint64_t seed = 0, weights_seed = 0;
  bool seed_given = false, weights_seed_given = false;
  fs::path out;
  std::vector<int64_t> rows;
};

// With --rows, the output rows that expected.* hold, in their order.
constexpr std::string_view kRowIndexTensor = "expected.row_index";

std::string join_rows(const std::vector<int64_t>& rows) {
  std::string s;
  for (int64_t r : rows) s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

int run_dump(DumpCommand& c, GlobalOptions& g) {
  resolve_defaults(g);
  Problem p = find_problem(g, c.problem);
  if (c.shape < 0 || c.shape >= static_cast<int64_t>(p.shapes.size()))
    throw UsageError(fmt::format("--shape {}: out of range: {} has {} shapes (0 to {}; `kbench show {}` lists them)",
                                 c.shape, p.name, p.shapes.size(), p.shapes.size() - 1, p.name));
  const ShapeCase& shape = p.shapes[static_cast<size_t>(c.shape)];
  const uint64_t seed = c.seed_given ? c.seed : p.check_seeds.at(0);
  const uint64_t weights_seed = c.weights_seed_given ? c.weights_seed : seed;
  if (c.out.extension() != ".safetensors")
    throw UsageError(fmt::format("--out {}: expected a file name ending in .safetensors", c.out.string()));
  if (fs::is_symlink(c.out))
    throw UsageError(fmt::format("--out {}: a symbolic link; kbench writes a file of its own, not through a link", c.out.string()));
  if (fs::exists(c.out) && !fs::is_regular_file(c.out))
    throw UsageError(fmt::format("--out {}: exists and is not a file", c.out.string()));
  if (c.out.has_parent_path() && !fs::is_directory(c.out.parent_path()))
    throw UsageError(fmt::format("--out {}: the folder {} does not exist", c.out.string(), c.out.parent_path().string()));
  require_generators(p);

  // Rows index the leading dims of the outputs (deck/registry.h); every output has the same count.
  const auto out0 = p.tensor_shape(p.outputs.at(0), shape);
  const int64_t row_len = out0.empty() ? 1 : out0.back();
  const int64_t n_rows = numel_of(out0) / std::max<int64_t>(row_len, 1);
  std::set<int64_t> unique;
  for (int64_t r : c.rows) {
    if (r < 0 || r >= n_rows)
      throw UsageError(fmt::format("--rows {}: out of range: the outputs of {} ({}) have {} rows (0 to {})", r,
                                   p.shape_label(static_cast<size_t>(c.shape)), p.name, n_rows, n_rows - 1));
    unique.insert(r);
  }
  const std::vector<int64_t> rows(unique.begin(), unique.end());

  auto inputs = generate_inputs(p, shape, seed);
  auto weights = generate_weights(p, shape, weights_seed);
  int64_t total = 0;
  for (const auto& o : p.outputs) total += numel_of(p.tensor_shape(o, shape));
  if (rows.empty() && total > kSlowOracleElements && !g.json)
    std::cerr << fmt::format("computing the fp64 oracle on all {} rows ({} output elements); --rows picks fewer\n",
                             n_rows, total);
  auto expected = oracle_outputs(p, shape, inputs, weights, rows);

  // Inputs and weights whole (a solution needs all of them); the expected outputs whole, or with
  // --rows only the rows asked for: row i of expected.<output> is the output's row rows[i], and
  // expected.row_index says which (a few rows of a large shape are a small file).
  SafetensorsFile file;
  for (auto& t : inputs) file.tensors.push_back(SafetensorsTensor{t.name, t.dtype, t.shape, std::move(t.bytes)});
  for (auto& t : weights) file.tensors.push_back(SafetensorsTensor{t.name, t.dtype, t.shape, std::move(t.bytes)});
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    std::vector<int64_t> out_shape = p.tensor_shape(p.outputs[i], shape);
    std::vector<double> values;
    if (rows.empty()) {
      values = std::move(expected[i]);
    } else {
      const int64_t len = static_cast<int64_t>(expected[i].size()) / n_rows;  // this output's row length
      for (int64_t r : rows)
        values.insert(values.end(), expected[i].begin() + r * len, expected[i].begin() + (r + 1) * len);
      out_shape = {static_cast<int64_t>(rows.size()), len};
    }
    std::vector<double>().swap(expected[i]);  // a full-size output can be gigabytes: gone before the write
    HostTensor e("expected." + p.outputs[i].name, DType::f64, out_shape);
    std::memcpy(e.data(), values.data(), e.bytes.size());
    file.tensors.push_back(SafetensorsTensor{e.name, e.dtype, e.shape, std::move(e.bytes)});
  }
  if (!rows.empty()) {
    SafetensorsTensor index{std::string(kRowIndexTensor), DType::i64, {static_cast<int64_t>(rows.size())}, {}};
    index.bytes.resize(rows.size() * sizeof(int64_t));
    std::memcpy(index.bytes.data(), rows.data(), index.bytes.size());
    file.tensors.push_back(std::move(index));
  }
  json dims = json::object();
  for (size_t d = 0; d < p.dims.size(); ++d) dims[p.dims[d]] = shape.dims[d];
  std::string comparators;
  for (const auto& o : p.outputs)
    if (!o.comparator.empty()) comparators += (comparators.empty() ? "" : ",") + o.name + ":" + o.comparator;
  file.metadata = {{"problem", p.name},
                   {"shape", std::to_string(c.shape)},
                   {"shape_label", p.shape_label(static_cast<size_t>(c.shape))},
                   {"dims", dims.dump()},
                   {"seed", std::to_string(seed)},
                   {"weights_seed", std::to_string(weights_seed)},
                   {"rows", rows.empty() ? "all" : join_rows(rows)},
                   {"kbench_version", kbench_version()},
                   {"expected", rows.empty() ? "fp64 oracle values of every output, whole"
                                             : "fp64 oracle values of the rows in rows (and expected.row_index) only: "
                                               "row i of expected.<output> is that output's row rows[i], a row being "
                                               "a flat index over its leading dims"}};
  if (!comparators.empty()) file.metadata["comparators"] = comparators;
  // Through a temporary and a rename: a failed write leaves the old file whole, and a symbolic link
  // at --out is replaced, never written through. Streamed, tensor by tensor: the file can be larger
  // than the memory left for a second copy of it.
  const std::string header = encode_safetensors_header(file);
  std::vector<std::string_view> pieces{header};
  for (const auto& t : file.tensors) pieces.emplace_back(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  write_file_atomically(c.out, pieces);

  if (g.json) {
    json tensors = json::array();
    for (const auto& t : file.tensors)
      tensors.push_back({{"name", t.name}, {"dtype", safetensors_dtype(t.dtype)}, {"shape", t.shape}});
    std::cout << kb::json_text(json{{"file", c.out.string()}, {"metadata", file.metadata}, {"tensors", tensors}}) << "\n";
    return kExitPass;
  }
  std::cout << fmt::format("{}: {} shape {} ({}), seed {}, weights seed {}, rows {}\n", c.out.string(), p.name, c.shape,
                           p.shape_label(static_cast<size_t>(c.shape)), seed, weights_seed, file.metadata["rows"]);
  for (const auto& t : file.tensors)
    std::cout << fmt::format("  {:<20} {:<8} {}\n", t.name, safetensors_dtype(t.dtype), shape_string(t.shape));
  if (!comparators.empty())
    std::cout << "note: outputs judged by a comparator (" << comparators
              << ") have many right answers; expected.* holds one of them\n";
  return kExitPass;
}

}  // namespace

void register_dump_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<DumpCommand>();
  auto* cmd = app.add_subcommand("dump", "Write one case (inputs, weights, fp64 expected outputs) as a .safetensors file");
  add_global_options(*cmd, g);
  cmd->add_option("PROBLEM", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("--out", c->out, "The .safetensors file to write")->required();
  cmd->add_option("--shape", c->shape, "Shape index, as `kbench show PROBLEM` numbers them")
      ->check(whole_in(0, 1000000, "(a shape index)"))
      ->capture_default_str();
  auto* seed = cmd->add_option("--seed", c->seed, "Seed of the inputs (default: the problem's first check seed)")
                   ->check(whole_in(0, INT64_MAX, "(a seed)"));
  auto* weights_seed = cmd->add_option("--weights-seed", c->weights_seed, "Seed of the weights (default: --seed)")
                           ->check(whole_in(0, INT64_MAX, "(a seed)"));
  cmd->add_option("--rows", c->rows, "Write the expected outputs of these rows only (comma-separated)")
      ->delimiter(',');
  cmd->callback([c, &g, &exit_code, seed, weights_seed] {
    c->seed_given = seed->count() > 0;
    c->weights_seed_given = weights_seed->count() > 0;
    try {
      exit_code = run_dump(*c, g);
    } catch (const SafetensorsError& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
  });
}

}  // namespace kb::cli
