#include "eval/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

#include "core/hash.h"
#include "core/stats.h"
#include "core/version.h"
#include "deck/generate.h"
#include "deck/registry.h"
#include "eval/annotate.h"
#include "eval/baseline_cache.h"
#include "eval/baseline_comparison.h"
#include "eval/baseline_stage.h"
#include "eval/call_timeout.h"
#include "eval/comparator.h"
#include "eval/expected.h"
#include "eval/expected_cache.h"
#include "eval/forbidden_kernels.h"
#include "eval/gpu_work.h"
#include "eval/jit_kernels.h"
#include "protocol/messages.h"
#include "protocol/perturbation.h"
#include "protocol/recheck_reservoir.h"
#include "eval/python_scan.h"
#include "eval/sass.h"
#include "eval/run_delay.h"
#include "eval/shape_jobs.h"
#include "eval/static_scan.h"
#include "target/python_solution.h"
#include "eval/timing_confirmation.h"
#include "eval/worker_process.h"
#include "eval/worker_sandbox.h"
#include "target/compile.h"
#include "target/target.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Secret seeds and keys come from the OS entropy source at run time, never from the problem.
uint64_t fresh_secret() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Runs f and adds its wall time to `seconds` (ShapePhases).
template <class F>
decltype(auto) timed(double& seconds, F&& f) {
  struct AddOnExit {
    double& seconds;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~AddOnExit() { seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  } add{seconds};
  return f();
}

// One case as the parent knows it: the inputs it generated itself, their fingerprints, and the
// oracle's expected outputs. None of this is ever sent to the worker.
struct Case {
  uint64_t seed = 0;
  // A timed call's case: the inputs of `seed` perturbed as timed call `call` was (perturbation.h).
  std::optional<std::pair<uint64_t, uint64_t>> perturbed;  // (secret, call)
  std::vector<uint64_t> input_hashes;
  std::vector<std::vector<double>> expected;
  std::vector<HostTensor> inputs;  // kept only when an output's comparator needs them (comparator.h)
  bool expected_from_cache = false;  // a public seed's, served by eval/expected_cache.h
};

// Where a public seed's expected outputs may be cached (eval/expected_cache.h), and their key.
struct CachedExpected {
  const ExpectedCache* cache = nullptr;
  std::string key;
};

// The case of `seed` from its inputs as generated (generate_inputs(p, shape, seed)).
Case make_case_from(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& weights, uint64_t seed,
                    std::vector<HostTensor> inputs, uint64_t hash_key, const Target* target,
                    std::optional<std::pair<uint64_t, uint64_t>> perturbed, const CachedExpected* cached = nullptr) {
  Case c;
  c.seed = seed;
  c.perturbed = perturbed;
  if (perturbed) perturb_host_inputs(p, inputs, perturbed->first, perturbed->second);
  for (const auto& t : inputs) c.input_hashes.push_back(buffer_hash(t.data(), t.bytes.size(), hash_key));
  if (cached) {
    std::vector<size_t> numels;
    for (const auto& t : p.outputs) numels.push_back(static_cast<size_t>(numel_of(p.tensor_shape(t, shape))));
    if (auto values = cached->cache->load(cached->key, numels)) c.expected = std::move(*values), c.expected_from_cache = true;
  }
  if (!c.expected_from_cache) {
    c.expected = compute_expected(p, shape, inputs, weights, target, fresh_secret()).values;
    if (cached) cached->cache->store(cached->key, c.expected);
  }
  if (uses_comparator(p)) c.inputs = std::move(inputs);
  return c;
}

Case make_case(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& weights, uint64_t seed,
               uint64_t hash_key, const Target* target,
               std::optional<std::pair<uint64_t, uint64_t>> perturbed = std::nullopt,
               const CachedExpected* cached = nullptr) {
  return make_case_from(p, shape, weights, seed, generate_inputs(p, shape, seed), hash_key, target, perturbed, cached);
}

// Splits a payload of concatenated outputs, starting at `offset`, into host tensors. The bytes are
// copied without being zeroed first, and a payload that is exactly the one output of a problem
// with one is moved into it: a checked call of moe_swiglu's largest shape returns 0.8 GB.
std::vector<HostTensor> unpack_outputs(const Problem& p, const ShapeCase& shape, std::vector<std::byte>& payload,
                                       size_t& offset) {
  std::vector<HostTensor> outs;
  for (const auto& t : p.outputs) {
    HostTensor o;
    o.name = t.name;
    o.dtype = t.dtype;
    o.shape = p.tensor_shape(t, shape);
    const size_t n = static_cast<size_t>(numel_of(o.shape)) * element_bytes(o.dtype);
    if (offset + n > payload.size())
      throw std::runtime_error("the worker returned fewer output bytes than the outputs hold");
    if (p.outputs.size() == 1 && offset == 0 && n == payload.size())
      o.bytes = std::move(payload);
    else
      o.bytes.assign(payload.begin() + static_cast<std::ptrdiff_t>(offset),
                     payload.begin() + static_cast<std::ptrdiff_t>(offset + n));
    offset += n;
    outs.push_back(std::move(o));
  }
  return outs;
}

// Whether a wrong output's worst elements are the evidence of its failure (a comparator's
// rejection is explained by its message).
bool elementwise(Reason r) {
  return r == Reason::mismatch || r == Reason::nan || r == Reason::rel_l2 || r == Reason::unwritten;
}

// Judges one call: return code, fingerprints, then every output. Fills sc.finding (with the
// first failing output's worst elements as evidence, noted `where`).
void judge_call(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& weights, const Case& c,
                int rc, const std::vector<uint64_t>& got_in, const std::vector<uint64_t>& got_w,
                const std::vector<uint64_t>& weight_expect,
                const std::vector<HostTensor>& outs, bool settled, const std::string& where, SeedCheck& sc) {
  sc.pass = false;
  if (rc != 0) {
    sc.finding = {Reason::run_error, fmt::format("kb_run returned {} (non-zero means the solution reported an error)", rc)};
    return;
  }
  if (!settled) {
    sc.finding = {Reason::output_changed_after_return,
                  "the outputs changed after kb_run had returned (and the device was synchronised): work went on "
                  "in the background; every output must be final when the call is done"};
    return;
  }
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (got_in.at(i) != c.input_hashes.at(i)) {
      sc.finding = {Reason::input_modified, "input '" + p.inputs[i].name + "' was modified by kb_run (inputs are read-only)"};
      return;
    }
  for (size_t i = 0; i < p.weights.size(); ++i)
    if (got_w.at(i) != weight_expect.at(i)) {
      sc.finding = {Reason::weights_modified, "weight '" + p.weights[i].name +
                                                  "' was modified (weights are read-only; repack into your own buffers in kb_setup)"};
      return;
    }
  static const std::vector<int64_t> all_rows;
  sc.pass = true;
  sc.outputs = judge_outputs(p, shape, c.inputs, weights, outs, c.expected, all_rows);
  for (const auto& v : sc.outputs) {
    if (!v.pass && sc.pass) {
      sc.pass = false;
      sc.finding = {v.failure, v.message, elementwise(v.failure) ? output_evidence(v, where) : std::vector<Evidence>{}};
    }
  }
}

// The device-wide cross-check (docs/evaluation.md): after kb_run returns, the device may stay busy
// for at most the handed stream's own work plus the wake-up from synchronisation, which the idle
// synchronisation latency bounds from above. Work launched on another stream, or left running,
// shows as extra tail. The minimum over the checks is used, since noise (a host preemption) only
// ever adds time; 8 us (or 10% of the stream's work) absorbs driver jitter, so hidden work shorter
// than that escapes this check (the integrity layer's kernel provenance catches it).
std::optional<std::string> hidden_work(const std::vector<TailCheck>& checks) {
  if (checks.empty()) return std::nullopt;
  // The smallest excess of tail over the stream's own work, against the smallest idle
  // synchronisation latency: each minimum is the least disturbed measurement of its kind, and the
  // idle latency (submission plus wake-up) bounds the wake-up that ends an honest tail.
  double min_excess = 1e30, min_latency = 1e30, stream = 0, tail = 0;
  for (const auto& c : checks) {
    const double excess = c.tail - c.stream;
    if (excess < min_excess) {
      min_excess = excess;
      stream = c.stream;
      tail = c.tail;
    }
    min_latency = std::min(min_latency, c.latency);
  }
  const double hidden = min_excess - min_latency;
  constexpr double kJitterSeconds = 8e-6;
  if (hidden <= std::max(kJitterSeconds, 0.1 * stream)) return std::nullopt;
  return fmt::format("the GPU kept working {:.1f} us after kb_run returned, while the stream kbench handed over held only "
                     "{:.1f} us of work (least of {} checks; idle synchronisation takes {:.1f} us): work was launched on "
                     "another stream or left running; enqueue everything on c->stream",
                     tail * 1e6, stream * 1e6, checks.size(), min_latency * 1e6);
}

class ShapeRun {
 public:
  ShapeRun(const Problem& p, size_t index, const fs::path& library, const EvalOptions& o, const std::string& target,
           ShapeResult& out)
      : p_(p), shape_(p.shapes.at(index)), o_(o), r_(out) {
    r_.index = index;
    r_.label = p.shape_label(index);
    for (size_t d = 0; d < p.dims.size(); ++d) r_.dims.emplace_back(p.dims[d], shape_.dims[d]);
    const Variables vars = p.variables(shape_);
    r_.flops = p.flops.eval(vars);
    r_.bytes = p.bytes.eval(vars);
    args_ = WorkerArgs{target, p.dir, library, index, {}};
    // A Python solution on cuda compiles its kernels into a JIT cache kbench reads after setup
    // (eval/jit_kernels.h): the evaluation's, emptied by evaluate_build before its first shape.
    if (target == "cuda" && is_python_build(library)) args_.jit_cache = jit_cache_folder(o.work_dir);
    const auto known = o.expected_seconds.find(index);
    limits_ = o.call_timeout.count() > 0
                  ? fixed_call_timeout(o.call_timeout)
                  : default_call_timeout(p, index, target,
                                         known == o.expected_seconds.end() ? std::nullopt : std::optional(known->second));
    timeout_ = limits_.call();
    caps_.log_bytes = o.log_limit_bytes;
    caps_.memory_bytes = o.memory_limit_bytes ? *o.memory_limit_bytes : default_memory_limit(p, shape_, target);
    r_.call_timeout_seconds = static_cast<double>(timeout_.count()) / 1000;
  }

  void set_library_kernels(const std::set<std::string>* names) { library_kernels_ = names; }
  // The machine code a Python solution's Triton code compiled for this shape (python_provenance).
  const std::optional<SassReport>& jit_sass() const { return jit_sass_; }
  ShapeResult& result() { return r_; }

  // What the evaluator's loop does at two points of this shape's run: start the next shape's
  // worker once this one's kb_setup has returned (its start-up, a CUDA context and the solution's
  // library, then overlaps this shape's checks), and wait for that start-up to finish before this
  // shape's timing, so that nothing but the timed solution runs then. And the threads of that
  // worker, which are kbench's own on the GPU (the timing confirmation's listing of the GPU's users).
  struct Hooks {
    std::function<void()> after_setup;
    std::function<void()> before_timing;
    std::function<void(std::set<long>&)> add_own_threads;
  };
  void set_hooks(Hooks h) { hooks_ = std::move(h); }

  // Starts this shape's worker now, before run(): its start-up goes on while an earlier shape is
  // judged. A failure to start is kept and reported by run() as this shape's.
  void start_worker_early() {
    fs::remove(worker_log());
    try {
      early_worker_ = start_worker();
    } catch (...) {
      early_failure_ = std::current_exception();
    }
  }
  // Waits until the early worker has started (or failed to: kept for run()).
  void wait_for_early_worker() {
    if (!early_worker_ || early_failure_) return;
    try {
      early_worker_->wait_ready();
    } catch (...) {
      early_failure_ = std::current_exception();
      early_worker_.reset();
    }
  }
  void add_early_worker_threads(std::set<long>& ours) const {
    if (!early_worker_ || early_worker_->pid() <= 0) return;
    for (const auto& [tid, delay] : thread_run_delays(early_worker_->pid())) ours.insert(tid);
  }

  // Returns true when the shape passed everything that was asked.
  bool run(const Target& target, const Ceilings* ceilings) {
    const bool pass = timed(r_.seconds.total, [&] { return run_phases(target, ceilings); });
    const ShapePhases& t = r_.seconds;
    say(fmt::format("{:.1f} s: worker start {:.1f} s, setup {:.1f} s, expected outputs {:.1f} s, worker calls {:.1f} s "
                    "(checks {:.1f}, repeats {:.1f}, timing {:.1f}, confirmation {:.1f}), judging {:.1f} s",
                    t.total, t.start, t.setup, t.expected, t.worker, t.checks, t.repeats, t.timing, t.confirmation,
                    t.judging));
    return pass;
  }

 private:
  bool run_phases(const Target& target, const Ceilings* ceilings) {
    target_ = &target;
    if (!early_worker_ && !early_failure_) fs::remove(worker_log());
    hash_key_ = fresh_secret();
    weights_seed_ = fresh_secret();
    if (o_.check) check_seeds_ = check_seed_order();
    // The input sets the timed calls rotate over, each of a fresh secret seed (docs/evaluation.md).
    if (o_.bench)
      for (int i = 0; i < std::max(1, o_.timing.input_sets); ++i) bench_seeds_.push_back(fresh_secret());
    // The parent's copy of the weights, and then the first checked seed's case, are made on a
    // thread of their own while the worker starts and runs kb_setup (which makes its own copy of
    // the weights from weights_seed_ alone): on moe_swiglu's largest shape each side takes seconds.
    // Declared before the worker, so that on every way out the worker is gone before this waits.
    std::promise<void> weights_made;
    std::future<void> weights_ready = weights_made.get_future();
    std::future<Case> first_case = std::async(std::launch::async, [this, &weights_made] {
      try {
        weights_ = generate_weights(p_, shape_, weights_seed_);
        for (const auto& t : weights_) weight_hashes_.push_back(buffer_hash(t.data(), t.bytes.size(), hash_key_));
      } catch (...) {
        weights_made.set_exception(std::current_exception());
        throw;
      }
      weights_made.set_value();
      return check_seeds_.empty() ? Case{} : check_case(check_seeds_.front().first, check_seeds_.front().second);
    });
    try {
      std::unique_ptr<WorkerProcess> started = std::move(early_worker_);
      if (early_failure_) std::rethrow_exception(early_failure_);
      timed(r_.seconds.start, [&] {
        if (!started) started = start_worker();
        started->wait_ready();
      });
      WorkerProcess& w = *started;
      const int rc = timed(r_.seconds.setup, [&] {
        const int setup_rc = setup(w);
        weights_ready.get();
        return setup_rc;
      });
      if (rc != 0 && setup_enomem_ && caps_.memory_bytes > 0)
        return fail(Reason::out_of_memory,
                    fmt::format("kb_setup returned {} with errno ENOMEM: an allocation failed at the worker's memory limit "
                                "of {} (--memory-limit raises it)",
                                rc, byte_size_text(caps_.memory_bytes)));
      if (rc != 0) return fail(Reason::setup_error, fmt::format("kb_setup returned {}", rc));
      if (!args_.jit_cache.empty() && o_.integrity && !python_provenance()) return false;
      if (hooks_.after_setup) hooks_.after_setup();
      if (o_.check && !check(w, std::move(first_case))) return false;
      if (o_.bench && !bench(w, target, *ceilings)) return false;
      w.finish(timeout_);
      // A solution that ignores SIGXFSZ runs on with its writes refused: the full log still fails it.
      if (w.log_full())
        return fail(Reason::log_limit, fmt::format("the solution wrote {} or more to its stdout/stderr, the log limit "
                                                   "(--log-limit raises it)",
                                                   byte_size_text(caps_.log_bytes)));
    } catch (const WorkerFailure& e) {
      const std::string& k = e.kind();
      return fail(k == "timeout"         ? Reason::timeout
                  : k == "crash"         ? Reason::crash
                  : k == "sandbox"       ? Reason::sandbox_violation
                  : k == "forged"        ? Reason::channel_forged
                  : k == "log_limit"     ? Reason::log_limit
                  : k == "out_of_memory" ? Reason::out_of_memory
                                         : Reason::load_error,
                  e.what());
    }
    r_.pass = true;
    return true;
  }

  // Keys the worker's channel and runs kb_setup in it (the shape's weights, from weights_seed_);
  // returns kb_setup's return code.
  int setup(WorkerProcess& w) {
    // The channel key: from here on every reply must carry its HMAC (protocol.h).
    const auto key = random_channel_key();
    w.set_channel_key(key);
    const uint64_t out_bytes = output_bytes(p_, shape_);
    w.set_max_payload(out_bytes * static_cast<uint64_t>(std::max({o_.timing.rechecks, o_.repeat_calls, 1})));
    // A Python solution's setup starts CPython, imports torch and JIT-compiles its kernels: it gets
    // kPythonSetupAllowanceSeconds more (target/python_solution.h).
    const auto setup_timeout =
        is_python_build(args_.library)
            ? timeout_ + std::chrono::milliseconds(static_cast<int64_t>(kPythonSetupAllowanceSeconds * 1000))
            : timeout_;
    Message m = w.request(SetupRequest{weights_seed_, hash_key_, to_hex(key.data(), key.size()), o_.sandbox,
                                          o_.write_xor_execute}, setup_timeout);
    const auto reply = m.header.get<SetupReply>();
    setup_enomem_ = reply.enomem;
    return reply.rc;
  }

  // A wait on the worker, counted in `worker` and in its request's part of it (ShapePhases).
  template <class F>
  decltype(auto) worker_wait(double& part, F&& f) {
    return timed(r_.seconds.worker, [&]() -> decltype(auto) { return timed(part, f); });
  }

  // One checked call of case `c` (the worker's `check` op: fresh inputs of c.seed, outputs
  // poisoned, downloaded and re-fingerprinted), judged into `sc`; the reply is returned for what
  // else it carries (the GPU work).
  CheckReply checked_call(WorkerProcess& w, const Case& c, SeedCheck& sc) {
    CheckRequest req;
    req.seed = c.seed;
    if (c.perturbed) {
      req.perturb_secret = c.perturbed->first;
      req.perturb_call = c.perturbed->second;
    }
    Message m = worker_wait(r_.seconds.checks, [&] { return w.request(req, timeout_); });
    const auto reply = m.header.get<CheckReply>();
    size_t off = 0;
    auto outs = unpack_outputs(p_, shape_, m.payload, off);
    sc.seed = c.seed;
    sc.seconds = reply.seconds;
    judge(c, reply.rc, reply.input_hashes, reply.weight_hashes, outs, reply.settled, sc.secret, sc);
    return reply;
  }

  // Judges one returned call against its case (judge_call), counted as judging time. `secret`: the
  // case's seed is not to be named in the evidence.
  void judge(const Case& c, int rc, const std::vector<uint64_t>& input_hashes, const std::vector<uint64_t>& weight_hashes,
             const std::vector<HostTensor>& outs, bool settled, bool secret, SeedCheck& sc) {
    const std::string where =
        fmt::format("shape {} ({}), {}", r_.index, r_.label, secret ? "a secret seed" : fmt::format("seed {}", c.seed));
    timed(r_.seconds.judging, [&] {
      judge_call(p_, shape_, weights_, c, rc, input_hashes, weight_hashes, weight_hashes_, outs, settled, where, sc);
    });
  }

  fs::path worker_log() const { return o_.work_dir / fmt::format("worker-shape{}.log", r_.index); }

  // Spawns the shape's worker without waiting for its "ready" (WorkerProcess::wait_ready).
  std::unique_ptr<WorkerProcess> start_worker() const {
    return std::make_unique<WorkerProcess>(WorkerProcess::StartOnly{}, args_, worker_log(), start_timeout(), o_.isolate,
                                           caps_);
  }

  // The worker's start (bubblewrap, loading the library, the device's context and monitor) is
  // kbench's own work: it gets at least kWorkerStartSeconds even when calls get less.
  std::chrono::milliseconds start_timeout() const {
    constexpr std::chrono::milliseconds kWorkerStartSeconds{30000};
    return std::max(timeout_, kWorkerStartSeconds);
  }

  bool fail(Finding f) {
    // A solution that reports an error says why on its stderr (a Python solution's traceback,
    // src/python/bridge.cpp): the message quotes the end of the worker's log.
    if (f.reason == Reason::run_error || f.reason == Reason::setup_error)
      if (const std::string tail = worker_log_tail(worker_log(), 12); !tail.empty())
        f.message += "; its last output:\n" + tail;
    r_.pass = false;
    r_.finding = std::move(f);
    return false;
  }
  bool fail(Reason why, std::string message) { return fail(Finding{why, std::move(message)}); }

  void say(const std::string& s) {
    if (o_.progress) o_.progress(fmt::format("  shape {} ({}): {}", r_.index, r_.label, s));
  }

  // Generates the inputs of the timing's input sets (bench_seeds_) on a thread of its own.
  void start_bench_inputs() {
    bench_inputs_ = std::async(std::launch::async, [this] {
      std::vector<std::vector<HostTensor>> sets;
      for (uint64_t seed : bench_seeds_) sets.push_back(generate_inputs(p_, shape_, seed));
      return sets;
    });
  }

  // The checked seeds, (seed, secret), public and secret in a secret order: no call index tells
  // the solution which input is the published one, or that the judged calls are over.
  std::vector<std::pair<uint64_t, bool>> check_seed_order() const {
    std::vector<std::pair<uint64_t, bool>> seeds;
    for (uint64_t s : o_.seeds.empty() ? p_.check_seeds : o_.seeds) seeds.emplace_back(s, false);
    if (o_.secret)
      for (int i = 0; i < p_.secret_seeds; ++i) seeds.emplace_back(fresh_secret(), true);
    std::shuffle(seeds.begin(), seeds.end(), std::mt19937_64(fresh_secret()));
    return seeds;
  }

  // A checked seed's case: a public seed's expected outputs come from the cache where it holds them
  // (and go into it where not; there is a cache only for a problem without weights, which are
  // secret per run: evaluate_build); a secret seed's are always computed.
  Case check_case(uint64_t seed, bool secret) {
    const ExpectedCache* cache = o_.expected_cache.get();
    if (secret || !cache) return make_case(p_, shape_, weights_, seed, hash_key_, target_);
    const CachedExpected cached{cache, cache->key(r_.index, seed)};
    return make_case(p_, shape_, weights_, seed, hash_key_, target_, std::nullopt, &cached);
  }

  // The checked calls of check_seeds_, in order. Each seed's case (inputs, fingerprints, expected
  // outputs: the parent's work alone) is made on a thread of its own while the worker runs and the
  // parent judges the seed before it, so that the worker's calls and the parent's references
  // overlap; `first` is the first seed's, begun during setup. Nothing overlaps the timing (bench),
  // which starts only after every case here is done. Expected-output time counts only the waits
  // for a case that was not ready yet.
  bool check(WorkerProcess& w, std::future<Case> first) {
    const auto& seeds = check_seeds_;
    std::future<Case> pending = std::move(first);
    std::optional<Case> first_case;
    for (size_t k = 0; k < seeds.size(); ++k) {
      const auto [seed, secret] = seeds[k];
      Case c = timed(r_.seconds.expected, [&] { return pending.get(); });
      if (c.expected_from_cache) ++r_.expected_cached;
      if (k + 1 < seeds.size())
        pending = std::async(std::launch::async, [this, next = seeds[k + 1]] { return check_case(next.first, next.second); });
      SeedCheck sc;
      sc.secret = secret;
      const CheckReply reply = checked_call(w, c, sc);
      if (sc.pass)
        if (auto v = checked_gpu_work(reply.gpu_work)) {
          sc.pass = false;
          sc.finding = std::move(*v);
        }
      r_.checks.push_back(sc);
      const std::string name = secret ? "secret seed" : fmt::format("seed {}", seed);
      if (!sc.pass) {
        say(name + ": FAIL");
        return fail(sc.finding.located(name + ": "));
      }
      say(name + ": ok");
      if (!first_case) first_case = std::move(c);
    }
    return !first_case || o_.repeat_calls <= 0 || repeat(w, *first_case);
  }

  // One checked call of case `c` in a fresh worker (a process of its own: kb_setup with the same
  // weights, then that one call), judged like a checked call: what the solution does on these
  // inputs with nothing before them, as `kbench check --seed` would see it.
  SeedCheck clean_start_check(const Case& c) {
    say("a timed call was wrong: re-running its inputs on a fresh worker");
    WorkerProcess w(args_, o_.work_dir / fmt::format("worker-shape{}-clean-start.log", r_.index), start_timeout(), o_.isolate,
                    caps_);
    SeedCheck sc;
    sc.seed = c.seed;
    sc.secret = true;
    if (int rc = timed(r_.seconds.worker, [&] { return setup(w); }); rc != 0) {
      sc.finding = {Reason::setup_error, fmt::format("kb_setup returned {}", rc)};
      return sc;
    }
    checked_call(w, c, sc);
    w.finish(timeout_);
    return sc;
  }

  // A Python solution's own kernels, from the JIT cache its setup compiled into (eval/jit_kernels.h):
  // what kernel provenance compares the kernels that run with, and whose machine code must hold
  // the problem's required instruction classes. False (the shape failed) on a missing class; when
  // the cubins cannot be read, provenance by name is off for the shape, as for a C++ library
  // whose SASS cannot be read.
  bool python_provenance() {
    JitKernels jit = jit_kernels(args_.jit_cache, o_.isolate);
    say(fmt::format("provenance: {} kernel{} compiled by the solution's Triton code ({} cubin{}){}", jit.names.size(),
                    jit.names.size() == 1 ? "" : "s", jit.cubins, jit.cubins == 1 ? "" : "s",
                    jit.note.empty() ? "" : ": " + jit.note));
    if (!jit.available) return true;
    jit_kernels_ = std::move(jit.names);
    library_kernels_ = &jit_kernels_;
    // The problem's required instruction classes in the machine code Triton compiled (fails
    // closed without a disassembler, as for a C++ library); the facts go to result.json's `sass`.
    if (jit.cubins > 0) {
      auto v = check_required_instructions(p_.required_instructions, "", jit.sass);
      jit_sass_ = std::move(jit.sass);
      if (v) return fail(std::move(*v));
    }
    return true;
  }

  // The GPU work a checked reply reports (CUPTI; absent without the monitor), kept in the result
  // and judged for provenance, streams and persisting L2 when integrity checks apply.
  std::optional<Finding> checked_gpu_work(const json& gpu_work) {
    if (!o_.integrity || gpu_work.is_null()) return std::nullopt;
    r_.gpu_work = gpu_work;
    return judge_gpu_work(r_.gpu_work, library_kernels_, p_.allowed_libraries);
  }

  // The race check: the same inputs `repeat_calls` times. Every repeat is judged like a checked
  // call (a race that fails now and then gets that many more chances to show), and where the
  // problem demands bitwise determinism every repeat must equal the first bit for bit.
  bool repeat(WorkerProcess& w, const Case& c) {
    // The parent waits on the repeated calls with nothing to do: the timing's input sets are made now.
    if (o_.bench) start_bench_inputs();
    Message m = worker_wait(r_.seconds.repeats, [&] {
      return w.request(RepeatRequest{c.seed, o_.repeat_calls}, limits_.calls(o_.repeat_calls));
    });
    const auto reply = m.header.get<RepeatReply>();
    if (reply.rc != 0)
      return fail(Reason::run_error, fmt::format("kb_run returned {} on repeated call {} of identical inputs", reply.rc,
                                                 reply.call));
    const std::vector<bool>& settled = reply.settled;
    if (settled.size() != static_cast<size_t>(o_.repeat_calls))
      return fail(Reason::channel_forged, "the repeat reply does not hold the calls kbench asked for");
    size_t off = 0;
    std::vector<HostTensor> first;
    for (int i = 0; i < o_.repeat_calls; ++i) {
      auto outs = unpack_outputs(p_, shape_, m.payload, off);
      SeedCheck sc;
      judge(c, 0, reply.input_hashes, reply.weight_hashes, outs, settled[i], false, sc);
      if (!sc.pass)
        return fail(sc.finding.located(fmt::format("call {} of {} repeated on identical inputs (seed {}), after the same "
                                                   "inputs had passed: ", i + 1, o_.repeat_calls, c.seed)));
      if (i == 0) {
        first = std::move(outs);
        continue;
      }
      if (!p_.bitwise_deterministic) continue;
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k].bytes == first[k].bytes) continue;
        const size_t eb = element_bytes(outs[k].dtype);
        size_t at = 0, differ = 0;
        for (size_t e = 0; e * eb < outs[k].bytes.size(); ++e)
          if (std::memcmp(outs[k].bytes.data() + e * eb, first[k].bytes.data() + e * eb, eb) != 0 && differ++ == 0) at = e;
        return fail(Reason::nondeterministic,
                    fmt::format("output '{}' differs between calls on identical inputs (seed {}): call {} against call 1, "
                                "{} element{} differ, the first at flat index {} ({} vs {}); {} requires bitwise-identical "
                                "results for identical inputs (policy.determinism): a race, or a reduction whose order "
                                "depends on timing",
                                p_.outputs[k].name, c.seed, i + 1, differ, differ == 1 ? "" : "s", at,
                                outs[k].get(static_cast<int64_t>(at)), first[k].get(static_cast<int64_t>(at)), p_.name));
      }
    }
    if (auto v = checked_gpu_work(reply.gpu_work))
      return fail(v->located(fmt::format("repeated calls on identical inputs (seed {}): ", c.seed)));
    say(fmt::format("{} repeats on identical inputs: ok{}", o_.repeat_calls, p_.bitwise_deterministic ? " (bitwise)" : ""));
    return true;
  }

  bool bench(WorkerProcess& w, const Target& target, const Ceilings& ceil) {
    const TimingPolicy& pol = o_.timing;
    // The input sets the timed calls rotate over (bench_seeds_, drawn before setup), and the secrets
    // that perturb every timed call's inputs and pick the re-checked calls (docs/evaluation.md).
    const std::vector<uint64_t>& seeds = bench_seeds_;
    if (hooks_.before_timing) hooks_.before_timing();
    // The sets' inputs as generated, which every re-checked call's case starts from (a copy,
    // perturbed as its call was): made while the worker repeated calls where it did, and finished
    // before the timing starts, so that no work of the parent's runs beside it.
    if (!bench_inputs_.valid()) start_bench_inputs();
    const std::vector<std::vector<HostTensor>> base = timed(r_.seconds.expected, [&] { return bench_inputs_.get(); });
    const uint64_t perturb_secret = fresh_secret();
    const RecheckReservoir reservoir(fresh_secret(), static_cast<size_t>(std::max(pol.rechecks, 0)));
    say("timing");
    const auto budget = limits_.bench(pol);
    Message m = worker_wait(r_.seconds.timing, [&] {
      return w.request(BenchRequest{seeds, pol, perturb_secret, reservoir.seed(),
                                    static_cast<size_t>(std::max(pol.rechecks, 0))},
                       budget);
    });
    const auto reply = m.header.get<BenchReply>();
    if (reply.rc != 0)
      return fail(Reason::run_error, fmt::format("kb_run returned {} during {}", reply.rc, reply.phase));
    // Every call the reservoir holds after the calls that ran must come back re-checked, and no other.
    const std::vector<uint64_t> expected_calls = reservoir.sample_after(reply.timed_calls);
    const std::vector<RecheckedCall>& rechecked = reply.rechecked;
    bool same = rechecked.size() == expected_calls.size();
    for (size_t k = 0; same && k < expected_calls.size(); ++k)
      same = rechecked[k].iteration == expected_calls[k] && rechecked[k].set == expected_calls[k] % seeds.size();
    if (!same)
      return fail(Reason::channel_forged, "the timing reply does not re-check the calls kbench chose: it did not "
                                          "come from kbench's worker code");
    size_t off = 0;
    // Each re-checked call's case is made while the one before is judged (as in check()).
    auto recheck_case = [&](size_t k) {
      std::optional<std::pair<uint64_t, uint64_t>> perturbed;
      if (pol.perturb) perturbed = std::make_pair(perturb_secret, rechecked[k].iteration);
      const size_t set = rechecked[k].set;
      return std::async(std::launch::async, [this, &base, seed = seeds.at(set), set, perturbed] {
        return make_case_from(p_, shape_, weights_, seed, base.at(set), hash_key_, target_, perturbed);
      });
    };
    std::future<Case> pending;
    if (!rechecked.empty()) pending = recheck_case(0);
    for (size_t k = 0; k < rechecked.size(); ++k) {
      const RecheckedCall& rc = rechecked[k];
      const uint64_t it = rc.iteration;
      const size_t set = rc.set;
      const Case c = timed(r_.seconds.expected, [&] { return pending.get(); });
      if (k + 1 < rechecked.size()) pending = recheck_case(k + 1);
      auto outs = unpack_outputs(p_, shape_, m.payload, off);
      SeedCheck sc;
      judge(c, 0, rc.input_hashes, reply.weight_hashes, outs, rc.settled, true, sc);
      if (!sc.pass) {
        const Reason why = sc.finding.reason;
        if (why == Reason::input_modified || why == Reason::weights_modified || why == Reason::output_changed_after_return)
          return fail(sc.finding.located(fmt::format("timed call {} (input set {}): ", it, set)));
        // A wrong result is a cache (or deferred, or timing-dependent work) only if the solution
        // gets these inputs right from a clean start; otherwise it is simply wrong on inputs the
        // checks did not happen to draw (a rare tie, an edge case), and says so.
        const SeedCheck clean = clean_start_check(c);
        if (!clean.pass)
          return fail(clean.finding.located(fmt::format("secret inputs of timed call {}, wrong there and again on a "
                                                        "fresh worker (kb_setup, then one call of these inputs): ", it)));
        return fail(Reason::timed_output_wrong,
                    fmt::format("timed call {} (input set {}, perturbed in every row as every timed call is) gave a "
                                "wrong result, while a fresh worker (kb_setup, then one call of the same inputs) gets it "
                                "right: results must not be cached, deferred or depend on the calls before: {}",
                                it, set, sc.finding.message));
      }
    }
    TimingRecord t;
    t.samples = reply.samples;
    if (pol.steady_floor && !reply.samples.empty()) {
      // The steady floor: no call scores below the steady cost per call (TimingPolicy::steady_floor).
      // The figure is the worker's, as the samples are; the confirmation by kbench's own clock,
      // which times calls back to back too, bounds both.
      const bool measured = reply.steady && !reply.steady->batch_seconds.empty() &&
                            std::all_of(reply.steady->batch_seconds.begin(), reply.steady->batch_seconds.end(),
                                        [](double v) { return std::isfinite(v) && v >= 0; });
      if (!measured)
        return fail(Reason::channel_forged,
                    "the worker's bench reply lacks the steady cost per call kbench asked for (batches of calls back "
                    "to back with their launches), or holds a time that is not one");
      const std::vector<double>& batches = reply.steady->batch_seconds;
      t.steady = SteadyRecord{quantile(batches, 0.5), reply.steady->calls, batches, reply.steady->host_batch_seconds};
      t.cold_samples = reply.samples;
      t.samples = steady_floored(reply.samples, t.steady->seconds);
    }
    t.throttled = reply.throttled;
    t.max_sm_clock_mhz = reply.max_sm_clock_mhz;
    t.warmup_calls = reply.warmup_calls;
    t.stop_reason = reply.stop_reason;
    t.wall_seconds = reply.wall_seconds;
    const std::vector<double>& clocks = reply.sm_clocks_mhz;
    if (!clocks.empty()) {
      t.sm_clock_median_mhz = quantile(clocks, 0.5);
      t.sm_clock_min_mhz = *std::min_element(clocks.begin(), clocks.end());
    }
    if (reply.hot) {
      t.hot_seconds = reply.hot->seconds;
      t.hot_calls = reply.hot->calls;
      t.hot_mode = reply.hot->mode;
    }
    if (t.samples.empty())
      return fail(Reason::throttled, fmt::format("every one of {} cold samples ran with the SM clock below {:.0f}% of its "
                                                 "maximum: the GPU is throttling; nothing to score",
                                                 t.throttled, 100 * pol.throttle_threshold));
    t.seconds = summarize(t.samples);
    // On cuda, warm-up calls run on an idle stream and timed calls behind the blocking kernel: a
    // solution that tells them apart shows as warm-up calls far slower (eval/timing.h). On the host
    // nothing tells a timed call from another, and thread-pool start-up and a loaded machine make
    // warm-up times unrepresentative, so the check is the cuda target's.
    t.host_call_samples = reply.host_call_seconds;
    if (args_.target == "cuda" && pol.blocking_kernel)
      if (auto why = warmup_unlike_timed_calls(reply.warmup_call_seconds, t))
        // Another process's kernels on the GPU slow warm-up calls, not the timed ones' GPU time:
        // a shared GPU is no evidence (warmup_finding).
        return fail(warmup_finding(*why, gpu_sharing(thread_run_delays(w.pid()))));
    t.tail_checks = reply.tail_checks;  // result.json keeps them as the worker measured them
    t.event_samples = reply.event_samples;
    t.span_samples = reply.span_samples;
    r_.timing = t;
    r_.gpu_work = reply.gpu_work;
    if (!o_.integrity) {
      // kbench's own baseline: vendor kernels and their streams are its business.
    } else if (gpu_work_monitored(r_.gpu_work)) {
      if (auto v = judge_gpu_work(r_.gpu_work, library_kernels_, p_.allowed_libraries)) return fail(std::move(*v));
    } else if (auto why = hidden_work(reply.tail_checks)) {
      // Without attribution (no CUPTI), the device-wide cross-check is the fallback.
      return fail(Reason::work_outside_stream, *why);
    }
    RooflinePoint rp = roofline(r_.flops, r_.bytes, t.seconds.median, p_.regime,
                                ceil.compute_peak(p_.compute_peak).value, ceil.memory_peak(p_.memory_peak).value);
    if (ceil.launch_floor) rp = with_launch_floor(rp, ceil.launch_floor->value);
    r_.roofline = rp;
    // Written bytes a write-back cache can hold need not reach DRAM within the timed call (the L2
    // is flushed of the inputs before it, not of the outputs after it): those are not evidence.
    const double held = p_.memory_peak == "dram"
                            ? static_cast<double>(std::min(output_bytes(p_, shape_), target.write_back_cache_bytes()))
                            : 0.0;
    if (auto why = physics_violation(rp, target.physics_slack(), held)) return fail(Reason::impossible_time, *why);
    if (o_.integrity && !confirm_timing(w, seeds, ceil)) return false;
    say(fmt::format("median {:.3f} us over {} samples ({})", t.seconds.median * 1e6, t.seconds.n, t.stop_reason));
    return true;
  }

  // Whether processes other than kbench's own computed on the GPU just now (target/gpu_sharing.h):
  // kbench's own are this process, the worker's tree (`worker_threads`, thread_run_delays of the
  // worker: threads include processes) and the next shape's worker, started early; nullopt on the
  // host.
  std::optional<GpuSharing> gpu_sharing(const RunDelays& worker_threads) const {
    std::set<long> ours = {static_cast<long>(getpid())};
    for (const auto& [tid, delay] : worker_threads) ours.insert(tid);
    if (hooks_.add_own_threads) hooks_.add_own_threads(ours);
    return target_->device_sharing(ours);
  }

  // The timing's confirmation by the parent's own clock (eval/timing_confirmation.h): K calls on
  // copies of the timed input sets, perturbed by a secret sent when the clock starts, must take no
  // longer than the claimed median allows; one of them, drawn afterwards, is judged. Records the
  // confirmation in r_.timing.
  bool confirm_timing(WorkerProcess& w, const std::vector<uint64_t>& seeds, const Ceilings& ceil) {
    TimingRecord& t = *r_.timing;
    // The claim: the samples' median, or their mean where larger (on a loaded host a call of a few
    // milliseconds usually runs within one time slice, so the median misses the waits that calls
    // back to back pay; a faked timing lowers both).
    const double median = std::max(t.seconds.median, t.seconds.mean);
    const uint64_t in_bytes = input_bytes(p_, shape_), out_bytes = output_bytes(p_, shape_);
    const size_t k = confirmation_calls(median, in_bytes + out_bytes);
    ConfirmationCosts costs;
    costs.target = args_.target;
    if (ceil.launch_floor) costs.launch_floor = ceil.launch_floor->value;
    costs.memory_peak = ceil.memory_peak(p_.memory_peak).value;
    costs.output_bytes = out_bytes;
    for (const auto& in : p_.inputs) {
      if (!in.perturb) continue;
      const PerturbRows rows = perturb_rows(p_.tensor_shape(in, shape_));
      costs.perturb_bytes += perturbation_bytes(rows.rows, rows.len, element_bytes(in.dtype));
    }
    const ConfirmationAllowance allow = confirmation_allowance(costs, k);
    ConfirmationRecord rec;
    rec.calls = k;
    rec.allowance_per_call = allow.per_call;
    rec.allowance_fixed = allow.fixed;
    rec.per_call_seconds = INFINITY;
    say(fmt::format("confirming the timing by kbench's own clock ({} calls)", k));
    int tampered_runs = 0;
    double most_waited = 0;
    for (int attempt = 1; attempt <= kConfirmationAttempts; ++attempt) {
      Message prepared = worker_wait(r_.seconds.confirmation,
                                     [&] { return w.request(ConfirmPrepareRequest{k}, limits_.calls(1)); });
      if (prepared.header.get<ConfirmPrepareReply>().calls != k)
        return fail(Reason::channel_forged, "the worker did not prepare the calls kbench asked for");
      // The secret is drawn now, after the copies exist: nothing in the worker can know it earlier.
      const uint64_t secret = fresh_secret();
      const pid_t caller = worker_main_thread(w.pid());
      const RunDelays before = thread_run_delays(w.pid());
      const auto t0 = std::chrono::steady_clock::now();
      Message m = worker_wait(r_.seconds.confirmation,
                              [&] { return w.request(ConfirmRequest{secret}, limits_.calls(static_cast<int>(k))); });
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const RunDelays after = thread_run_delays(w.pid());
      const double waited = run_delay_growth(before, after, caller);
      // The longest wait of the worker's other threads: what decides whether the run can be
      // evidence at all, never what a claim is upheld by (below).
      const double others = largest_run_delay_growth(before, after, caller);
      const auto reply = m.header.get<ConfirmReply>();
      if (reply.rc != 0)
        return fail(Reason::run_error,
                    fmt::format("kb_run returned {} on call {} of the timing's confirmation", reply.rc, reply.call));
      bool complete = reply.output_hashes.size() == k;
      for (const auto& h : reply.output_hashes) complete = complete && h.size() == p_.outputs.size();
      if (!complete)
        return fail(Reason::channel_forged, "the confirmation's reply does not fingerprint the calls kbench asked for");
      if (auto v = checked_gpu_work(reply.gpu_work)) return fail(v->located("the timing's confirmation: "));
      const double per_call = confirmed_seconds_per_call(wall, k, allow);
      rec.attempts = attempt;
      if (per_call < rec.per_call_seconds) {
        rec.per_call_seconds = per_call;
        rec.wall_seconds = wall;
      }
      rec.enforced = confirmation_enforced(args_.target);
      // The wait of the thread that calls kb_run for a CPU is load, not the solution's: forgiven.
      const double unloaded = confirmed_seconds_per_call(wall - waited, k, allow);
      if (upholds(median, per_call) || upholds(median, unloaded) || !rec.enforced) {
        // Upheld (or not enforced on this target: recorded only): the run that counted is judged,
        // on a call drawn after its commitment.
        if (!rec.enforced && !upholds(median, per_call))
          say(fmt::format("confirmation: {:.3f} us per call against a claimed {:.3f} us (recorded, not enforced on {})",
                          per_call * 1e6, median * 1e6, args_.target));
        rec.judged_call = static_cast<size_t>(fresh_secret() % k);
        t.confirmation = rec;
        return judge_confirmation(w, seeds, secret, rec.judged_call, reply.output_hashes[rec.judged_call]);
      }
      // Evidence, not load: too slow even with the calling thread's wait for a CPU forgiven, in a run on a
      // quiet machine; or far too slow in any run (a loaded machine also slows the calls it does
      // run: shared caches and memory bandwidth, which no scheduler statistic shows).
      // Contention the scheduler cannot show: other processes on the GPU (nullopt on the host).
      const std::optional<GpuSharing> sharing = gpu_sharing(after);
      if (sharing) rec.gpu_sharing = gpu_sharing_name(*sharing);
      // Evidence needs every other thread of the solution's to have had its CPU: an OpenMP team's
      // threads wait for a CPU on a loaded host while the calling thread spins at their barrier,
      // and the caller's wait alone showed a loaded 2-core machine as quiet and an honest OpenMP
      // solution as tampered (26x). A solution that makes its own threads wait gains nothing by
      // it: at most `timing_unconfirmed` (an error, no score) instead of a fail.
      if (run_is_tampering_evidence(median, wall, k, allow, waited, others, !sharing || *sharing == GpuSharing::exclusive))
        ++tampered_runs;
      most_waited = std::max({most_waited, waited / wall, others / wall});
      say(fmt::format("confirmation {}: {:.3f} us per call against a claimed {:.3f} us ({:.0f}% of it waiting for a "
                      "CPU; its other threads at most {:.0f}%)",
                      attempt, per_call * 1e6, median * 1e6, 100 * waited / wall, 100 * others / wall));
    }
    t.confirmation = rec;
    const std::string figures = fmt::format(
        "{} calls timed by kbench's own clock outside the solution's process took {:.3f} us each at best ({} runs; "
        "{:.3f} ms in all, with kbench's own work, {:.3f} us per call and {:.3f} ms per run, taken off), against the "
        "{:.3f} us the samples recorded inside the worker claim (their median, or mean where larger); more than {:.0f}x "
        "that is not timing noise",
        k, rec.per_call_seconds * 1e6, rec.attempts, rec.wall_seconds * 1e3, allow.per_call * 1e6, allow.fixed * 1e3,
        median * 1e6, kConfirmationSlack);
    if (tampered_runs == 0 && !rec.gpu_sharing.empty() && rec.gpu_sharing != gpu_sharing_name(GpuSharing::exclusive))
      return fail(Reason::timing_unconfirmed,
                  fmt::format("{}; but {}, and their work on the GPU could explain up to {:.0f}x: kbench cannot tell "
                              "tampering from a shared GPU here; judge it again with the GPU to itself",
                              figures,
                              rec.gpu_sharing == gpu_sharing_name(GpuSharing::shared)
                                  ? "other processes had a context on the GPU (nvidia-smi)"
                                  : "kbench could not see which processes used the GPU (nvidia-smi did not list its own)",
                              kLoadedEvidenceSlack));
    if (tampered_runs == 0)
      return fail(Reason::timing_unconfirmed,
                  fmt::format("{}; but a thread of the solution's spent up to {:.0f}% of a run waiting for a CPU, which "
                              "explains it: this machine is too loaded to tell tampering from load; judge it again on a "
                              "quieter machine",
                              figures, 100 * most_waited));
    return fail(Reason::timing_tampered,
                fmt::format("{} ({} of the {} runs too slow even with its threads' wait for a CPU forgiven: more than "
                            "{:.0f}x on a quiet machine, or {:.0f}x on a loaded one or a GPU)",
                            figures, tampered_runs, rec.attempts, kConfirmationSlack, kLoadedEvidenceSlack));
  }

  // Fetches the confirmation's call `call` and judges it: its outputs must be those committed to
  // by `committed` (their fingerprints) and right for its inputs, copy `call` of set call mod S,
  // perturbed as call `call` of `secret`.
  bool judge_confirmation(WorkerProcess& w, const std::vector<uint64_t>& seeds, uint64_t secret, size_t call,
                          const std::vector<uint64_t>& committed) {
    Message m =
        worker_wait(r_.seconds.confirmation, [&] { return w.request(ConfirmFetchRequest{call}, limits_.calls(1)); });
    const auto fetched = m.header.get<ConfirmFetchReply>();
    size_t off = 0;
    auto outs = unpack_outputs(p_, shape_, m.payload, off);
    for (size_t i = 0; i < outs.size(); ++i)
      if (buffer_hash(outs[i].data(), outs[i].bytes.size(), hash_key_) != committed.at(i))
        return fail(Reason::output_changed_after_return,
                    fmt::format("output '{}' of call {} of the timing's confirmation changed after the worker had "
                                "fingerprinted it at the end of the timed run: work went on after the clock stopped",
                                p_.outputs[i].name, call));
    const uint64_t seed = seeds.at(call % seeds.size());
    const Case c = timed(r_.seconds.expected, [&] {
      return make_case(p_, shape_, weights_, seed, hash_key_, target_, std::make_pair(secret, static_cast<uint64_t>(call)));
    });
    SeedCheck sc;
    judge(c, 0, fetched.input_hashes, fetched.weight_hashes, outs, /*settled=*/true, /*secret=*/true, sc);
    if (sc.pass) return true;
    const Reason why = sc.finding.reason;
    if (why == Reason::input_modified || why == Reason::weights_modified)
      return fail(sc.finding.located(fmt::format("call {} of the timing's confirmation: ", call)));
    const SeedCheck clean = clean_start_check(c);
    if (!clean.pass)
      return fail(clean.finding.located(fmt::format("secret inputs of call {} of the timing's confirmation, wrong there "
                                                    "and again on a fresh worker: ", call)));
    return fail(Reason::timed_output_wrong,
                fmt::format("call {} of the timing's confirmation (calls back to back on fresh perturbed inputs, timed "
                            "by kbench's own clock) gave a wrong result, while a fresh worker gets the same inputs "
                            "right: calls were skipped, cached or deferred: {}",
                            call, sc.finding.message));
  }

  const Problem& p_;
  const ShapeCase& shape_;
  const EvalOptions& o_;
  ShapeResult& r_;
  WorkerArgs args_;
  const Target* target_ = nullptr;
  CallTimeout limits_;                 // of the shape's requests (eval/call_timeout.h)
  std::chrono::milliseconds timeout_;  // of one request that makes one call
  WorkerLimits caps_;                  // the worker's log and memory caps (eval/worker_limits.h)
  bool setup_enomem_ = false;          // kb_setup failed with errno ENOMEM
  Hooks hooks_;
  std::unique_ptr<WorkerProcess> early_worker_;  // start_worker_early's, until run() takes it
  std::exception_ptr early_failure_;             // why it did not start
  // The kernels the solution's library defines (provenance); null when they could not be listed.
  const std::set<std::string>* library_kernels_ = nullptr;
  std::set<std::string> jit_kernels_;  // a Python solution's own (python_provenance)
  std::optional<SassReport> jit_sass_;   // the machine code of its cubins
  uint64_t hash_key_ = 0;
  uint64_t weights_seed_ = 0;
  std::vector<std::pair<uint64_t, bool>> check_seeds_;  // (seed, secret), in the order they are checked
  std::vector<uint64_t> bench_seeds_;                    // the timing's input sets
  std::vector<HostTensor> weights_;
  std::vector<uint64_t> weight_hashes_;
  // The timing's input sets, as generated (start_bench_inputs). Last, so that it is destroyed first,
  // waiting for its thread while everything that thread reads is still there.
  std::future<std::vector<std::vector<HostTensor>>> bench_inputs_;
};

void summarize_scores(EvalResult& r) {
  std::vector<double> peak, sol, achievable;
  for (const auto& s : r.shapes) {
    if (!s.roofline) return;
    peak.push_back(s.roofline->peak_fraction);
    sol.push_back(s.roofline->sol_fraction);
    if (s.roofline->achievable_fraction) achievable.push_back(*s.roofline->achievable_fraction);
  }
  if (peak.empty()) return;
  r.peak_fraction_geomean = geomean(peak);
  r.sol_fraction_geomean = geomean(sol);
  // Every shape's, or none: a geomean over some shapes would not be the problem's.
  if (achievable.size() == peak.size()) r.achievable_fraction_geomean = geomean(achievable);
}

// `kbench check`'s shapes, up to `jobs` at once (eval/shape_jobs.h), in the secret order of
// `shapes`: each shape's run on a thread of its own, its worker started on this thread, which
// outlives it (a worker's parent-death signal follows the thread that forked it). The first shapes'
// workers start beside the parent's preparation (start_first_workers), their runs once it is done
// (run). Results go to r.shapes as each shape ends; once one has failed no other starts, unless
// every shape is asked for, and the first failure in the secret order is the verdict's. The
// progress lines of the shapes are serialised, each already naming its shape.
class ConcurrentCheck {
 public:
  ConcurrentCheck(const Problem& p, const std::vector<size_t>& shapes, const fs::path& library, const EvalOptions& o,
                  const std::string& target_name, size_t jobs)
      : p_(p), shapes_(shapes), library_(library), o_(o), po_(o), target_name_(target_name), jobs_(jobs) {
    if (o.progress)
      po_.progress = [this](const std::string& line) {
        std::lock_guard<std::mutex> hold(say_lock_);
        o_.progress(line);
      };
  }
  ~ConcurrentCheck() {
    // Every run's thread is joined before its ShapeRun (and worker) goes: `passed` first.
    for (auto& job : running_)
      if (job.passed.valid()) job.passed.wait();
  }

  // Starts the workers of the shapes that may start now, without running them.
  void start_first_workers() {
    while (next_ < shapes_.size() && start_next()) {
    }
  }

  void run(EvalResult& r, const Target& target, const Ceilings* ceilings, const std::set<std::string>* library_kernels,
           Finding& first_failure) {
    target_ = &target, ceilings_ = ceilings, library_kernels_ = library_kernels;
    for (auto& job : running_) launch(job);
    while (next_ < shapes_.size() || !running_.empty()) {
      const bool stopped = !failures_.empty() && !o_.all_shapes;
      while (!stopped && next_ < shapes_.size() && start_next()) launch(running_.back());
      if (stopped && running_.empty()) break;
      // Wait for any shape to end.
      auto done = running_.end();
      while (done == running_.end()) {
        for (auto it = running_.begin(); it != running_.end() && done == running_.end(); ++it)
          if (it->passed.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) done = it;
        if (done == running_.end()) running_.front().passed.wait_for(std::chrono::milliseconds(5));
      }
      const bool passed = done->passed.get();  // rethrows what the run threw, after which the others are joined
      ShapeResult& result = done->run->result();
      if (!passed) failures_.emplace(done->pos, result.finding.located(fmt::format("shape {} ({}): ", result.index, result.label)));
      r.shapes.push_back(result);
      running_bytes_ -= done->bytes;
      running_.erase(done);  // its worker is stopped here, on the thread that started it
    }
    for (; next_ < shapes_.size(); ++next_) r.shapes_not_judged.push_back(shapes_[next_]);
    if (!failures_.empty()) first_failure = failures_.begin()->second;
  }

 private:
  struct Running {
    size_t pos = 0;
    uint64_t bytes = 0;
    std::unique_ptr<ShapeRun> run;
    std::future<bool> passed;  // declared after `run`: destroyed (joined) before it
  };

  // Starts the next shape's worker where the job count and the byte budget allow; false when not.
  bool start_next() {
    const size_t i = shapes_[next_];
    const auto bytes = static_cast<uint64_t>(shape_tensor_bytes(p_, p_.shapes[i]));
    if (!shape_may_start(running_.size(), running_bytes_, bytes, jobs_)) return false;
    if (po_.progress) po_.progress(fmt::format("shape {}/{}: {}", i, p_.shapes.size(), p_.shape_label(i)));
    results_.emplace_back();
    Running job{next_++, bytes, std::make_unique<ShapeRun>(p_, i, library_, po_, target_name_, results_.back()), {}};
    job.run->start_worker_early();
    running_bytes_ += bytes;
    running_.push_back(std::move(job));
    return true;
  }

  void launch(Running& job) {
    job.run->set_library_kernels(library_kernels_);
    job.passed = std::async(std::launch::async, [this, run = job.run.get()] { return run->run(*target_, ceilings_); });
  }

  const Problem& p_;
  const std::vector<size_t>& shapes_;
  const fs::path library_;
  const EvalOptions& o_;
  EvalOptions po_;  // o_ with the progress serialised
  std::mutex say_lock_;
  const std::string target_name_;
  const size_t jobs_;
  const Target* target_ = nullptr;
  const Ceilings* ceilings_ = nullptr;
  const std::set<std::string>* library_kernels_ = nullptr;
  std::deque<ShapeResult> results_;  // a run holds a reference to its own
  std::vector<Running> running_;
  std::map<size_t, Finding> failures_;  // by position in the secret order
  uint64_t running_bytes_ = 0;
  size_t next_ = 0;
};

EvalResult evaluate_build(const Problem& p, const fs::path& given_dir, const EvalOptions& asked,
                          const std::vector<std::string>& libraries) {
  // Absolute and without "..": the build and the scan run in sandboxes that bind this folder by its
  // normal path, where "build/../problems/..." names a folder that is not there.
  const fs::path solution_dir = fs::absolute(given_dir).lexically_normal();
  const auto t0 = std::chrono::steady_clock::now();
  EvalOptions o = asked;  // the timing policy is the solution's (solution_timing_policy), once its language is known
  EvalResult r;
  r.mode = o.check && o.bench ? "eval" : o.bench ? "bench" : "check";
  r.problem = p.name;
  r.solution_dir = solution_dir.string();
  r.kbench_version = kbench_version();
  r.started_at = now_iso8601();
  r.timing_policy = o.timing;
  r.regime = std::string(regime_name(p.regime));
  r.compute_peak_key = p.compute_peak;
  r.memory_peak_key = p.memory_peak;
  r.sandbox.seccomp = o.sandbox;
  r.sandbox.write_xor_execute = o.sandbox && o.write_xor_execute;
  r.sandbox.reason = o.no_isolation_reason;
  // The verdict follows from the reason (verdict/reason.h); Reason::none is a pass.
  auto finish = [&](Finding f) {
    r.finding = std::move(f);
    r.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  try {
    std::unique_ptr<Target> target;
    try {
      target = make_target(o.target);
    } catch (const std::invalid_argument& e) {
      return finish({Reason::unsupported_target, e.what()});
    }
    r.target = target->name();
    if (!p.supports(r.target))
      return finish({Reason::unsupported_target, "problem " + p.name + " does not support the " + r.target + " target"});
    require_generators(p);
    require_comparators(p);
    // The sandbox first: a machine that cannot make one refuses to judge rather than run the
    // solution's build and code with kbench's user, environment and files.
    EvalResult::Preparation& prep = r.preparation_seconds;
    if (o.isolate) {
      const BwrapProbe probe = timed(prep.sandbox, [] { return probe_worker_sandbox(); });
      if (!probe.ok)
        return finish({Reason::no_sandbox,
                       probe.error + ". kbench runs the solution's build and code only in a sandbox; pass --no-sandbox "
                                     "to judge without one (result.json records it)"});
      r.sandbox.enabled = true;
      r.sandbox.reason.clear();
      r.sandbox.version = probe.version;
    }
    r.device = timed(prep.device, [&] { return target->device_description(); });
    fs::create_directories(o.work_dir);

    // The static scan (static_scan.h): the problem's forbidden patterns and tampering patterns,
    // and for Python sources the AST scan (python_scan.h), in the build's sandbox when kbench has one.
    if (o.integrity) {
      PythonScanOptions python;
      python.forbidden_torch = p.forbidden_torch;
      python.kit_modules = python_kit_modules(solution_dir);
      python.sandbox = o.isolate;
      if (Finding f = timed(prep.scan, [&] { return scan_sources(solution_dir, p.forbidden, python); }); f.failed())
        return finish(std::move(f));
    }

    // A Python solution (target/python_solution.h) where Python solutions cannot run: named, not
    // built into a failure that reads like a compiler's.
    const bool python = is_python_solution(solution_dir, target->source_file());
    if (python)
      if (const auto why = python_unavailable_reason(r.target))
        return finish({Reason::unsupported_target, "Python solutions are unavailable on the " + r.target + " target: " + *why});
    o.timing = solution_timing_policy(o.timing, r.target, python && o.python_launches_timed);
    r.timing_policy = o.timing;

    if (o.progress) o.progress("building " + r.solution_dir);
    const BuildOptions bo = solution_build_options(p, o.isolate, libraries);
    BuildResult b = timed(prep.build, [&] { return target->build(solution_dir, o.build_dir, bo); });
    r.build = BuildRecord{b.ok, b.cached, b.seconds, b.command, b.library.string(), b.ok ? "" : trim_compiler_log(b.log)};
    if (!b.ok) return finish({Reason::build_error, "the solution does not compile:\n" + r.build.log_excerpt});

    // What the library exports, read from its ELF dynamic table before anything loads it.
    if (o.integrity) {
      Finding f;
      try {
        f = check_exported_symbols(b.library);
      } catch (const std::exception& e) {
        return finish({Reason::load_error, std::string("the built library cannot be inspected: ") + e.what()});
      }
      if (f.failed()) return finish(std::move(f));
    }

    // The public seeds' expected outputs, cached per binary, problem, device, shape and seed
    // (eval/expected_cache.h), for a problem without weights (drawn from a secret seed each run);
    // none where not asked for, or where the device cannot be identified.
    o.expected_cache.reset();
    if (!o.expected_cache_dir.empty() && p.weights.empty()) {
      try {
        o.expected_cache = std::make_shared<const ExpectedCache>(o.expected_cache_dir, p, r.target, target->device_fingerprint(),
                                                                 kbench_version(), running_binary_identity());
      } catch (const std::exception&) {
        // every case computed, as without the cache
      }
    }

    // Shapes in a secret order (each in a worker of its own); results are reported in index order.
    std::vector<size_t> shapes = o.shapes;
    if (shapes.empty())
      for (size_t i = 0; i < p.shapes.size(); ++i) shapes.push_back(i);
    for (size_t i : shapes)
      if (i >= p.shapes.size())
        return finish({Reason::bad_shape, fmt::format("shape index {} out of range: {} has {} shapes", i, p.name, p.shapes.size())});
    std::shuffle(shapes.begin(), shapes.end(), std::mt19937_64(fresh_secret()));
    const size_t jobs = shape_jobs(o.shape_jobs, o.bench, python, std::thread::hardware_concurrency());
    // Shapes judged one at a time: the first one's worker starts now, while the parent reads the
    // library's machine code and loads the ceilings (its start-up -- sandbox, CUDA context, CUPTI,
    // the library -- was about 0.9 s of an H200's 3.8 s `check` of softmax, paid before anything
    // else could run). Not a Python solution's: its Triton cache is emptied below, before any of
    // its workers starts. A failure found before the shapes stops it (its ShapeRun is destroyed).
    std::deque<ShapeResult> results;  // before the runs that hold references into it
    std::unique_ptr<ShapeRun> first_run;
    std::optional<ConcurrentCheck> concurrent;
    if (jobs > 1) {
      concurrent.emplace(p, shapes, b.library, o, r.target, jobs);
      concurrent->start_first_workers();  // a check's first shapes (a Python one's is never concurrent)
    } else if (!python && !shapes.empty()) {
      results.emplace_back();
      first_run = std::make_unique<ShapeRun>(p, shapes.front(), b.library, o, r.target, results.back());
      first_run->start_worker_early();
      if (o.progress) o.progress(fmt::format("starting shape {}'s worker beside the preparation", shapes.front()));
    }

    // What the machine code holds (eval/sass.h), and the problem's required instruction classes.
    // Not for a Python solution: its library is kbench's bridge, and its kernels are compiled at
    // run time (Triton's cubins, torch's own); their SASS facts and provenance are not judged yet
    // (docs/threat-model.md, "Python solutions").
    if (r.target == "cuda" && !python) {
      r.sass = timed(prep.sass, [&] { return inspect_sass(b.library, o.isolate); });
      if (auto v = check_required_instructions(p.required_instructions, b.command, *r.sass); v && o.integrity)
        return finish(std::move(*v));
      // A forbidden library's kernels compiled in under names the source hid (eval/forbidden_kernels.h).
      if (o.integrity)
        if (auto v = check_forbidden_kernels(p.forbidden, *r.sass)) return finish(std::move(*v));
    }

    // Kernel provenance compares the kernels that ran with those the library defines.
    std::optional<std::set<std::string>> library_kernels;
    if (r.sass && r.sass->available) library_kernels = r.sass->kernel_names();

    std::optional<Ceilings> ceilings;
    if (o.bench) {
      // measure = false: scoring uses the datasheet (cuda) and must not wait ~a minute for the GPU's
      // own measurement; that is `kbench ceilings`' job. Host ceilings are measured regardless.
      ceilings = timed(prep.ceilings, [&] { return target->ceilings(o.hardware_dir, o.refresh_ceilings, /*measure=*/false); });
      r.ceilings_id = ceilings->id;
      r.ceilings_measured = ceilings->measured;
      r.compute_peak = ceilings->compute_peak(p.compute_peak).value;
      r.memory_peak = ceilings->memory_peak(p.memory_peak).value;
      if (ceilings->launch_floor) r.launch_floor_seconds = ceilings->launch_floor->value;
    }
    // One Triton cache for the evaluation's shapes (eval/jit_kernels.h), emptied now, before any of
    // their workers starts: nothing compiled before this evaluation counts as the solution's own,
    // and a kernel one shape compiled is found by the next shapes' setup instead of compiled again.
    if (python && r.target == "cuda") {
      std::error_code ec;
      fs::remove_all(jit_cache_folder(o.work_dir), ec);
      fs::create_directories(jit_cache_folder(o.work_dir));
    }
    if (o.progress)
      o.progress(fmt::format("prepared: sandbox probe {:.1f} s, device {:.1f} s, scan {:.1f} s, build {:.1f} s, sass {:.1f} s, "
                             "ceilings {:.1f} s",
                             prep.sandbox, prep.device, prep.scan, prep.build, prep.sass, prep.ceilings));
    Finding first_failure;
    if (jobs > 1) {
      concurrent->run(r, *target, ceilings ? &*ceilings : nullptr, library_kernels ? &*library_kernels : nullptr,
                      first_failure);
      shapes.clear();  // judged
    }
    // Each shape's worker is started while the shape before is checked (ShapeRun::Hooks): a worker's
    // start-up (sandbox, CUDA context, CUPTI, the solution's library) costs about 0.3 s on an H100,
    // paid once instead of once per shape. Results live in a deque: a run holds a reference to its own.
    std::unique_ptr<ShapeRun> next = std::move(first_run);  // the first shape's, started above
    for (size_t pos = 0; pos < shapes.size(); ++pos) {
      const size_t i = shapes[pos];
      // The verdict is known at the first failing shape: the rest are left unjudged unless asked.
      if (first_failure.failed() && !o.all_shapes) {
        next.reset();  // its early worker is stopped
        r.shapes_not_judged.push_back(i);
        continue;
      }
      if (o.progress) o.progress(fmt::format("shape {}/{}: {}", i, p.shapes.size(), p.shape_label(i)));
      std::unique_ptr<ShapeRun> run = std::move(next);
      if (!run) {
        results.emplace_back();
        run = std::make_unique<ShapeRun>(p, i, b.library, o, r.target, results.back());
      }
      ShapeResult& result = run->result();
      run->set_library_kernels(library_kernels ? &*library_kernels : nullptr);
      ShapeRun::Hooks hooks;
      if (pos + 1 < shapes.size()) {
        hooks.after_setup = [&, pos, i] {
          results.emplace_back();
          next = std::make_unique<ShapeRun>(p, shapes[pos + 1], b.library, o, r.target, results.back());
          next->start_worker_early();
          if (o.progress) o.progress(fmt::format("  shape {}: starting shape {}'s worker", i, shapes[pos + 1]));
        };
        hooks.before_timing = [&] {
          if (next) next->wait_for_early_worker();
        };
        hooks.add_own_threads = [&](std::set<long>& ours) {
          if (next) next->add_early_worker_threads(ours);
        };
      }
      run->set_hooks(std::move(hooks));
      const bool passed = run->run(*target, ceilings ? &*ceilings : nullptr);
      // A Python solution's SASS facts: its first judged shape's cubins (the bridge has none), each
      // kernel with the def of the Triton function it is named after, for the annotation.
      if (!r.sass && run->jit_sass()) {
        r.sass = run->jit_sass();
        const auto defs = triton_kernel_definitions(b.library.parent_path() / "python" / "src");
        for (auto& k : r.sass->listing.kernels)
          if (auto d = defs.find(k.name); d != defs.end()) {
            k.source_file = d->second.file;
            k.source_line = d->second.line;
          }
      }
      if (!passed && !first_failure.failed())
        first_failure = result.finding.located(fmt::format("shape {} ({}): ", i, result.label));
      r.shapes.push_back(result);
    }
    next.reset();
    std::stable_sort(r.shapes.begin(), r.shapes.end(), [](const ShapeResult& a, const ShapeResult& b) { return a.index < b.index; });
    std::sort(r.shapes_not_judged.begin(), r.shapes_not_judged.end());
    if (first_failure.failed()) {
      if (!r.shapes_not_judged.empty())
        first_failure.message += fmt::format(" ({} other shape{} not judged: the verdict was known; --all-shapes judges every shape)",
                                             r.shapes_not_judged.size(), r.shapes_not_judged.size() == 1 ? "" : "s");
      return finish(std::move(first_failure));
    }
    summarize_scores(r);
    return finish({});
  } catch (const std::exception& e) {
    return finish({Reason::internal_error, std::string("kbench could not complete the evaluation: ") + e.what()});
  }
}

// The options the baseline is evaluated with: the solution's, judged in full by the same path,
// except that kbench's own code is exempt from the integrity checks (it may use the very libraries
// a problem forbids solutions) and a baseline that synchronises its stream cannot be captured.
EvalOptions baseline_options(const Problem& p, const EvalOptions& o, const std::string& target) {
  EvalOptions bo = o;
  bo.check = true;
  bo.bench = true;  // the baseline is the reference line of `bench` and `eval`
  bo.work_dir = o.work_dir / "baseline";
  bo.target = target;
  bo.integrity = false;
  bo.python_launches_timed = false;
  // The W^X rule guards against the agent's code, and the baseline is kbench's own: its vendor
  // libraries decide when they load code (cuDNN 9's libcudnn.so is a shim that loads its
  // sub-libraries on demand), which no kbench test can pin for every library version. On an H200
  // (driver 580.159.04) cuDNN's first cudnnSoftmaxForward after the filter mapped nothing
  // executable; the rule stays off for the baseline all the same, and its result.json says so.
  bo.write_xor_execute = false;
  bo.expected_seconds.clear();
  if (p.baseline_synchronizes) {
    bo.timing.blocking_kernel = false;
    bo.timing.hot_capture = false;
  }
  return bo;
}

// The baseline's place in its cache (eval/baseline_cache.h) and what it holds; no `file` when the
// cache cannot be used (a target or device kbench cannot name).
struct CachedBaseline {
  std::string key;
  fs::path file;
  std::optional<EvalResult> result;
};

CachedBaseline look_up_baseline(const Problem& p, const EvalOptions& o) {
  CachedBaseline c;
  try {
    const std::unique_ptr<Target> target = make_target(o.target);
    const std::string name = target->name();
    if (!p.supports(name) || !fs::is_regular_file(baseline_source(p, name))) return c;
    c.key = baseline_cache_key(p, name, target->device_fingerprint(), kbench_version(), baseline_options(p, o, name));
    c.file = baseline_cache_file(c.key);
    if (!o.refresh_baseline) c.result = read_cached_baseline(c.file, c.key);
  } catch (const std::exception&) {
    // No target or device to key on: the baseline is evaluated, as without a cache, and the
    // evaluation itself reports what is wrong.
    c.file.clear();
  }
  return c;
}

// A cached baseline was scored against the ceilings of its time: it stands for this evaluation only
// where the solution's are the same (a datasheet edited, host ceilings or the launch floor
// re-measured: re-scored fresh).
bool same_ceilings(const EvalResult& baseline, const EvalResult& r) {
  return baseline.ceilings_id == r.ceilings_id && baseline.compute_peak == r.compute_peak &&
         baseline.memory_peak == r.memory_peak && baseline.launch_floor_seconds == r.launch_floor_seconds;
}

}  // namespace

EvalResult evaluate(const Problem& p, const fs::path& solution_dir, const EvalOptions& o) {
  // Looked up for `check` too: the derived call timeout follows the baseline's time of each shape
  // where the cache knows it (eval/call_timeout.h), whichever command judges the solution.
  CachedBaseline cached;
  if (o.baseline) cached = look_up_baseline(p, o);
  EvalOptions so = o;
  if (cached.result)
    for (const auto& s : cached.result->shapes)
      if (s.timing && s.timing->seconds.median > 0) so.expected_seconds.try_emplace(s.index, s.timing->seconds.median);
  EvalResult r = evaluate_build(p, solution_dir, so, {});
  r.annotation = annotate(r);
  if (!o.bench || !o.baseline || r.target.empty()) return r;
  // The reference line is for comparing a passing solution's times: a failed one has none to compare.
  if (r.verdict() != Verdict::pass) {
    if (o.progress) o.progress("baseline: not timed (the solution did not pass)");
    return r;
  }
  const fs::path source = baseline_source(p, r.target);
  // v3's "beats baseline", computed here once the baseline is attached, and nowhere else.
  auto compare = [&r] {
    const BaselineComparison c = compare_with_baseline(r);
    r.speedup_vs_baseline = c.speedup;
    r.beats_baseline = c.beats;
  };
  if (cached.result && cached.result->target == r.target && same_ceilings(*cached.result, r)) {
    r.baseline = std::make_shared<EvalResult>(std::move(*cached.result));
    r.baseline->solution_dir = source.string();
    r.baseline_description = p.baseline_description;
    if (o.progress) o.progress("baseline: from the cache (" + cached.file.string() + ")");
    compare();
    return r;
  }
  try {
    auto staged = stage_baseline(p, r.target, o.work_dir);
    if (!staged) return r;
    EvalOptions bo = baseline_options(p, o, r.target);
    if (o.progress) bo.progress = [&o](const std::string& line) { o.progress("baseline: " + line); };
    r.baseline = std::make_shared<EvalResult>(evaluate_build(p, *staged, bo, p.baseline_libraries));
    r.baseline->solution_dir = source.string();
    r.baseline_description = p.baseline_description;
    // Only a passing baseline is kept: a failure (a transient one included) is tried again next time.
    if (!cached.file.empty() && write_cached_baseline(cached.file, cached.key, *r.baseline) && o.progress)
      o.progress("baseline: cached (" + cached.file.string() + ")");
  } catch (const std::exception& e) {
    // The reference line is informational: its failure never changes the solution's verdict.
    if (o.progress) o.progress(std::string("baseline: could not be evaluated: ") + e.what());
  }
  compare();
  return r;
}

}  // namespace kb
