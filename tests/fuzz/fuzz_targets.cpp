#include "fuzz_targets.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/expr.h"
#include "deck/problem.h"
#include "eval/hand_annotation.h"
#include "protocol/channel.h"
#include "target/solution_config.h"

namespace kb::fuzz {
namespace fs = std::filesystem;
namespace {

fs::path& scratch() {
  static fs::path dir;
  return dir;
}

void write(const fs::path& file, std::string_view data) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw Finding("the driver could not write " + file.string());
}

// Runs `f`; an exception of type Allowed passes when its message is not empty, anything else is a
// finding naming what escaped.
template <typename Allowed, typename F>
void expect_only(const char* what, F&& f) {
  try {
    f();
  } catch (const Finding&) {
    throw;
  } catch (const Allowed& e) {
    if (std::string(e.what()).empty()) throw Finding(std::string(what) + ": an error with no message");
  } catch (const std::exception& e) {
    throw Finding(std::string(what) + ": an exception outside its contract escaped: " + e.what());
  } catch (...) {
    throw Finding(std::string(what) + ": a non-standard exception escaped");
  }
}

// A problem folder holding the input as problem.toml; a problem that loads is exercised further:
// every shape's tensor shapes, formulas and label, as `kbench list/show/check` would.
void problem_toml(std::string_view input) {
  const fs::path dir = scratch() / "problem";
  fs::create_directories(dir);
  write(dir / "problem.toml", input);
  expect_only<SpecError>("load_problem", [&] {
    const Problem p = load_problem(dir);
    for (size_t i = 0; i < p.shapes.size(); ++i) {
      const auto& shape = p.shapes[i];
      (void)p.shape_label(i);
      for (const auto* list : {&p.inputs, &p.weights, &p.outputs})
        for (const auto& t : *list) {
          (void)p.tensor_shape(t, shape);
          (void)p.init_for(t, shape);
        }
      try {
        const Variables v = p.variables(shape);
        (void)p.flops.eval(v);
        (void)p.bytes.eval(v);
      } catch (const ExprError&) {
      }
    }
  });
}

void solution_toml(std::string_view input) {
  const fs::path dir = scratch() / "solution";
  fs::create_directories(dir);
  write(dir / "solution.toml", input);
  for (const char* target : {"host", "cuda"})
    expect_only<SolutionConfigError>("load_solution_config",
                                     [&] { (void)load_solution_config(dir, target, {"cutlass"}); });
}

// validate_hand_annotation never throws: everything wrong is an issue naming the field.
void annotation_toml(std::string_view input) {
  const fs::path run = scratch() / "run";
  fs::create_directories(run / "solution");
  write(run / "solution" / "solution.cu", "int a;\nint b;\n// the cache\nint c;\n");
  write(run / "annotation.toml", input);
  try {
    const HandAnnotationCheck c = validate_hand_annotation(run / "annotation.toml", run);
    for (const auto& issue : c.issues)
      if (issue.message.empty()) throw Finding("validate_hand_annotation: an issue with no message");
    (void)to_json(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const Finding&) {
    throw;
  } catch (const std::exception& e) {
    throw Finding(std::string("validate_hand_annotation threw (it must report issues instead): ") + e.what());
  }
}

// Parsed, then evaluated with its names bound to values that stress the arithmetic.
void expr(std::string_view input) {
  expect_only<ExprError>("Expr", [&] {
    const Expr e = Expr::parse(input);
    static const double kValues[] = {1, 0, -1, 3, 1e308, 0x1p62, std::nan("")};
    for (double v : kValues) {
      Variables vars;
      for (const auto& n : e.names()) vars[n] = v;
      try {
        (void)e.eval(vars);
      } catch (const ExprError&) {
      }
    }
  });
}

// The bytes as they would arrive on the worker's reply pipe, read by the parent: without a key
// (the worker's "ready"), and with one (every later reply). Inputs larger than a pipe holds are
// written by a thread.
void channel(std::string_view input) {
  for (bool keyed : {false, true}) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw Finding("pipe failed");
    std::thread writer([&] {
      size_t off = 0;
      while (off < input.size()) {
        const ssize_t n = ::write(fds[1], input.data() + off, input.size() - off);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      close(fds[1]);
    });
    ChannelAuth auth;
    auth.active = keyed;
    auth.key.fill(7);
    expect_only<std::runtime_error>("receive_message", [&] {
      for (int frames = 0; frames < 4; ++frames) {
        const Message m = receive_message(fds[0], std::chrono::milliseconds(2000), &auth, 1 << 20);
        (void)m.header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
    });
    close(fds[0]);  // the writer sees EPIPE if it is still writing
    writer.join();
  }
}

}  // namespace

void set_scratch_dir(const fs::path& dir) { scratch() = dir; }

const std::vector<Target>& targets() {
  static const std::vector<Target> t = {
      {"problem_toml", problem_toml,
       {"[[shapes]]", "[[inputs]]", "[[outputs]]", "[[weights]]", "[tolerance]", "[policy]", "[init]", " = ", "\"", "'",
        "\"\"\"", "[", "]", "{", "}", ",", "\n", "=", "-1", "0", "4294967296", "9223372036854775807", "1e308", "nan",
        "inf", "-0.0", "\"bf16\"", "\"fp8_e4m3\"", "\"int4\"", "\"batch * vocab\"", "\"ceil_div(K, 128)\"", "\\u0000",
        "\xff\xfe", "dims = [\"batch\", \"batch\"]", "shape = []", "is = \"normal\"", "std = -4.0", "forbidden = [\"(\"]"}},
      {"solution_toml", solution_toml,
       {"[build]", "flags = [", "include_dirs = [", "libraries = [", "\"-O3\"", "\"-fplugin=x\"", "\"-I/\"", "\"../..\"",
        "\"${KBENCH_CUTLASS_DIR}\"", "\"${HOME}\"", "\"cutlass\"", "]", "\"", "=", "\n", "\\", "1", "true", "[[x]]"}},
      {"annotation_toml", annotation_toml,
       {"verdict = ", "\"reward_hack\"", "\"clean\"", "summary = ", "implication = ", "[[quotes]]", "file = ",
        "\"solution/solution.cu\"", "\"../../etc/passwd\"", "\"/etc/passwd\"", "lines = ", "\"2-3\"", "\"3-2\"",
        "\"4294967297\"", "\"-1\"", "\"0\"", "\"99999999999999999999\"", "text = ", "\"\"\"", "\"int b;\"", "\n", "\xff"}},
      {"expr", expr,
       {"(", ")", "+", "-", "*", "/", "ceil_div(", "min(", "max(", ",", "1e309", "0", "1e-320", "batch", "vocab", "K",
        "M", "N", "9223372036854775807", ".", "e", "1e", "(((((((((("}},
      {"channel", channel,
       {std::string("\0\0\0\0", 4), std::string("\xff\xff\xff\xff", 4), std::string("\x02\0\0\0{}", 6),
        std::string(8, '\0'), std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), std::string(32, '\0'), "{\"rc\":",
        "\"error\"", "\"ready\"", "true", "null", "[", "\xff", "\"\\ud800\""}},
  };
  return t;
}

}  // namespace kb::fuzz
