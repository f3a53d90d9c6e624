#include "worker/worker.h"

#include <dlfcn.h>

#include <cerrno>
#include <new>

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "deck/generate.h"
#include "kbench/solution.h"
#include "protocol/channel.h"
#include "protocol/messages.h"
#include "protocol/perturbation.h"
#include "protocol/poison.h"
#include "protocol/poison_scan.h"
#include "protocol/recheck_reservoir.h"
#include "target/target.h"
#include "worker/sampling.h"
#include "worker/syscall_filter.h"
#include "worker/work_ledger.h"

namespace kb {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A tensor in device memory with the DLTensor that points at it.
struct DeviceTensor {
  Device* device = nullptr;
  void* ptr = nullptr;
  size_t bytes = 0;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  DLTensor dl{};

  DeviceTensor(Device& d, DType t, std::vector<int64_t> sh)
      : device(&d), bytes(static_cast<size_t>(numel_of(sh)) * element_bytes(t)), dtype(t), shape(std::move(sh)) {
    ptr = d.alloc(bytes);
    dl.data = ptr;
    dl.device = d.dl_device();
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = info(dtype).dl;
    dl.shape = shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  ~DeviceTensor() { device->release(ptr); }
};

using TensorList = std::vector<std::unique_ptr<DeviceTensor>>;

std::vector<DLTensor> views(const TensorList& ts) {
  std::vector<DLTensor> v;
  for (const auto& t : ts) v.push_back(t->dl);
  return v;
}

class Worker {
 public:
  Worker(const WorkerArgs& a)
      : problem_(load_problem(a.problem_dir)), shape_(problem_.shapes.at(a.shape)),
        target_(make_target(a.target)), device_(target_->open_device()) {
    lib_ = dlopen(a.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error(std::string("cannot load the solution library: ") + dlerror());
    setup_ = reinterpret_cast<decltype(setup_)>(dlsym(lib_, "kb_setup"));
    run_ = reinterpret_cast<decltype(run_)>(dlsym(lib_, "kb_run"));
    teardown_ = reinterpret_cast<decltype(teardown_)>(dlsym(lib_, "kb_teardown"));
    std::string missing;
    if (!setup_) missing += " kb_setup";
    if (!run_) missing += " kb_run";
    if (!teardown_) missing += " kb_teardown";
    if (!missing.empty())
      throw std::runtime_error("the solution does not export:" + missing +
                               " (declare them extern \"C\" as in kbench/solution.h)");
    outputs_ = allocate(problem_.outputs);  // poisoned before every call
    device_->start_work_monitor();
  }

  // Every reply is tagged with the channel key once the parent has handed it over (setup).
  template <class Reply>
  void reply(const Reply& r, const void* payload = nullptr, size_t bytes = 0) {
    send_message(kWorkerReplyFd, json(r), payload, bytes, &auth_);
  }

  // Returns false when the parent asked to stop.
  bool serve(const Message& m) {
    const std::string op = request_op(m.header);
    if (op == SetupRequest::kOp) return setup(m.header.get<SetupRequest>()), true;
    if (op == CheckRequest::kOp) return check(m.header.get<CheckRequest>()), true;
    if (op == BenchRequest::kOp) return bench(m.header.get<BenchRequest>()), true;
    if (op == RepeatRequest::kOp) return repeat(m.header.get<RepeatRequest>()), true;
    if (op == ConfirmPrepareRequest::kOp) return confirm_prepare(m.header.get<ConfirmPrepareRequest>()), true;
    if (op == ConfirmRequest::kOp) return confirm(m.header.get<ConfirmRequest>()), true;
    if (op == ConfirmFetchRequest::kOp) return confirm_fetch(m.header.get<ConfirmFetchRequest>()), true;
    if (op == TeardownRequest::kOp) {
      if (state_set_) teardown_(state_);
      state_set_ = false;
      reply(TeardownReply{});
      return false;
    }
    throw std::runtime_error("unknown worker op '" + op + "'");
  }

 private:
  void setup(const SetupRequest& req) {
    hash_key_ = req.hash_key;
    auth_.key = channel_key_from_hex(req.channel_key);
    auth_.active = true;
    weights_ = allocate(problem_.weights);
    fill(weights_, problem_.weights, req.weights_seed, kWeightStreamBase);
    weight_views_ = views(weights_);
    dim_names_.clear();
    for (const auto& n : problem_.dims) dim_names_.push_back(n.c_str());
    kb_problem p{problem_.name.c_str(), static_cast<int>(dim_names_.size()), dim_names_.data(), shape_.dims.data(),
                 weight_views_.data(), static_cast<int>(weight_views_.size())};
    errno = 0;
    int rc = setup_(&p, &state_);
    // A kb_setup that fails with errno ENOMEM most likely met the worker's memory limit
    // (eval/worker_limits.h); the parent names it (a solution gains nothing by faking it: a fail).
    const bool enomem = rc != 0 && errno == ENOMEM;
    device_->synchronize();
    state_set_ = rc == 0;
    // From here on the solution runs under the system-call filter (sandbox.h): after kb_setup and
    // the runtime's initialisation, before the first kb_run. W^X on both targets: the CUDA driver
    // maps nothing executable after initialisation, lazily loaded modules included
    // (tests/gpu/test_cuda_write_xor_execute.cpp).
    if (req.sandbox) install_worker_sandbox(/*forbid_new_executable_memory=*/req.write_xor_execute);
    reply(SetupReply{rc, enomem});
  }

  TensorList allocate(const std::vector<TensorSpec>& specs) {
    TensorList out;
    for (const auto& t : specs) out.push_back(std::make_unique<DeviceTensor>(*device_, t.dtype, problem_.tensor_shape(t, shape_)));
    return out;
  }

  // Writes the tensors of `specs` for `seed` into `ts`: generated on the device where the target
  // can (bit-identical to the host generators, and no host-to-device copy of large inputs), else
  // on the host and uploaded. Tensor i uses stream stream_base + i, as deck/generate.h does.
  void fill(TensorList& ts, const std::vector<TensorSpec>& specs, uint64_t seed, uint32_t stream_base) {
    for (size_t i = 0; i < specs.size(); ++i) {
      DeviceTensor& t = *ts[i];
      const uint32_t stream = stream_base + static_cast<uint32_t>(i);
      if (device_->generate(t.ptr, static_cast<int>(t.dtype), numel_of(t.shape), problem_.init_for(specs[i], shape_), seed,
                            stream))
        continue;
      const HostTensor h = generate_tensor(problem_, shape_, specs[i], seed, stream);
      device_->upload(t.ptr, h.data(), h.bytes.size());
    }
  }

  // Applies (or undoes) timed call `call`'s perturbation to an input set on the device.
  void perturb_set(TensorList& set, uint64_t secret, uint64_t call, bool undo) {
    const uint64_t key = perturb_call_key(secret, call);
    for (size_t i = 0; i < problem_.inputs.size(); ++i) {
      if (!problem_.inputs[i].perturb) continue;
      DeviceTensor& t = *set[i];
      const PerturbRows r = perturb_rows(t.shape);
      device_->perturb(t.ptr, r.rows, r.len, static_cast<int>(element_bytes(t.dtype)), key, static_cast<uint32_t>(i),
                       undo);
    }
  }

  void poison_outputs() { poison(outputs_); }
  void poison(const TensorList& outputs) {
    for (const auto& o : outputs) {
      Poison p = poison_for(o->dtype);
      device_->fill_pattern(o->ptr, o->bytes, p.pattern, p.bytes);
    }
  }

  std::vector<uint64_t> hashes(const TensorList& ts) {
    std::vector<uint64_t> h;
    for (const auto& t : ts) h.push_back(device_->hash(t->ptr, t->bytes, hash_key_));
    return h;
  }

  // One call of the solution on `inputs` into `outputs` (kbench's one output set by default), not
  // timed; returns kb_run's code.
  int call(const TensorList& inputs) { return call(inputs, outputs_); }
  int call(const TensorList& inputs, const TensorList& outputs) {
    auto in = views(inputs);
    auto out = views(outputs);
    kb_call c{in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()), device_->stream()};
    // Everything launched between these marks is the solution's (Device::mark_call).
    struct Mark {
      Device* d;
      explicit Mark(Device* dev) : d(dev) { d->mark_call(true); }
      ~Mark() { d->mark_call(false); }
    } mark(device_.get());
    return run_(state_, &c);
  }

  // The solution's GPU work since the last collection, added to `ledger`; returns it.
  std::vector<GpuWork> collect(WorkLedger& ledger) {
    auto work = device_->collect_work();
    if (!work) return {};
    ledger.add(*work);
    return std::move(*work);
  }

  // Every output, concatenated, into `buf` (resized to hold them; every byte overwritten).
  void download_outputs_into(std::vector<std::byte>& buf) {
    size_t total = 0;
    for (const auto& o : outputs_) total += o->bytes;
    buf.resize(total);
    size_t off = 0;
    for (const auto& o : outputs_) {
      device_->download(buf.data() + off, o->ptr, o->bytes);
      off += o->bytes;
    }
  }
  std::vector<std::byte> download_outputs() {
    std::vector<std::byte> buf;
    download_outputs_into(buf);
    return buf;
  }

  // The outputs' fingerprint `delay` after a first download: a solution whose work goes on after
  // kb_run returned (a thread of its own finishing the outputs later) changes them in between.
  bool outputs_settled(const std::vector<std::byte>& first, double call_seconds) {
    const double delay = std::clamp(4 * call_seconds, 0.01, 0.2);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    device_->synchronize();
    // The second look goes into one buffer kept from call to call: a fresh one per call cost the
    // zeroing and page faults of a whole output (0.8 GB on moe_swiglu's largest shape) each time.
    download_outputs_into(second_look_);
    if (second_look_ != first) return false;
    // Outputs left unfinished get a second, longer look: on a loaded machine a thread of the
    // solution's may not have been scheduled within the first delay, and its late writes are then
    // named for what they are (output_changed_after_return) rather than as unwritten elements.
    // Finished outputs, the honest case, never pay for it.
    if (!holds_nan_poison(first)) return true;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    device_->synchronize();
    download_outputs_into(second_look_);
    return second_look_ == first;
  }

  // Whether a float output of `outs` (laid out as download_outputs() returns them) still holds
  // kbench's poison in some element. Only the 16-bit and wider float types count: there the poison
  // is a NaN with kbench's own payload, which no honest computation writes (in 8-bit and integer
  // types the pattern is an ordinary value).
  bool holds_nan_poison(const std::vector<std::byte>& outs) const {
    size_t off = 0;
    for (const auto& o : outputs_) {
      const Poison p = poison_for(o->dtype);
      if (info(o->dtype).is_float && p.bytes >= 2 && holds_poison_element(outs.data() + off, o->bytes, p)) return true;
      off += o->bytes;
    }
    return false;
  }

  // Fresh inputs of `seed` for checked calls. The previous ones stay allocated until these are, so
  // consecutive checks never see the same input addresses (a cache keyed on the input pointer
  // cannot hit by chance).
  void fresh_inputs(uint64_t seed) {
    auto inputs = allocate(problem_.inputs);
    fill(inputs, problem_.inputs, seed, 0);
    prev_inputs_ = std::move(inputs);
  }

  struct CheckedCall {
    int rc = 0;
    double seconds = 0;             // wall time, launch to synchronised
    std::vector<std::byte> outputs;
    bool settled = false;           // the outputs did not change after kb_run returned
  };

  // One untimed call on the current inputs: outputs poisoned before, downloaded after, and
  // fingerprinted again a little later (outputs_settled).
  CheckedCall checked_call() {
    CheckedCall c;
    poison_outputs();
    device_->synchronize();
    const auto t0 = Clock::now();
    c.rc = call(prev_inputs_);
    device_->synchronize();
    c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    c.outputs = download_outputs();
    c.settled = outputs_settled(c.outputs, c.seconds);
    return c;
  }

  void check(const CheckRequest& req) {
    fresh_inputs(req.seed);
    // A timed call's inputs, re-run on a fresh worker: the set's seed, perturbed as that call was.
    if (req.perturb_call) perturb_set(prev_inputs_, req.perturb_secret.value_or(0), *req.perturb_call, /*undo=*/false);
    const CheckedCall c = checked_call();
    CheckReply r{c.rc, c.seconds, hashes(prev_inputs_), hashes(weights_), c.settled, nullptr};
    WorkLedger ledger;
    collect(ledger);  // after the settle wait: a thread of the solution's finishing late is seen too
    r.gpu_work = ledger.to_json(device_->monitor_status());
    reply(r, c.outputs.data(), c.outputs.size());
  }

  // The race check: `calls` checked calls on one set of inputs; every call's outputs come back,
  // concatenated, for the parent to judge and compare (a race that passes sometimes shows as
  // repeats that differ, or one that fails).
  void repeat(const RepeatRequest& req) {
    fresh_inputs(req.seed);
    // Reserved once: grown call by call, moe_swiglu's 4 x 0.8 GB would be copied again at each doubling.
    std::vector<std::byte> payload;
    size_t call_bytes = 0;
    for (const auto& o : outputs_) call_bytes += o->bytes;
    payload.reserve(call_bytes * static_cast<size_t>(std::max(req.calls, 0)));
    RepeatReply r;
    for (int i = 0; i < req.calls; ++i) {
      const CheckedCall c = checked_call();
      if (c.rc != 0) return reply(RepeatReply::failed(c.rc, i));
      r.settled.push_back(c.settled);
      payload.insert(payload.end(), c.outputs.begin(), c.outputs.end());
    }
    WorkLedger ledger;
    collect(ledger);
    r.input_hashes = hashes(prev_inputs_);
    r.weight_hashes = hashes(weights_);
    r.gpu_work = ledger.to_json(device_->monitor_status());
    reply(r, payload.data(), payload.size());
  }

  void bench(const BenchRequest& req) {
    const TimingPolicy& pol = req.policy;
    device_->set_blocking_kernel(pol.blocking_kernel);
    device_->set_hot_capture(pol.hot_capture);
    const std::vector<uint64_t>& seeds = req.seeds;
    // Every timed call runs on its set's inputs perturbed by a key of its own (perturbation.h), and
    // any of them may be re-checked (a reservoir sample the parent can recompute).
    const bool perturb = pol.perturb;
    const uint64_t perturb_secret = req.perturb_secret;
    const RecheckReservoir reservoir(req.reservoir_seed, req.rechecks);
    std::vector<TensorList> sets;
    for (uint64_t s : seeds) {
      sets.push_back(allocate(problem_.inputs));
      fill(sets.back(), problem_.inputs, s, 0);
    }
    device_->synchronize();
    auto run_set = [&](size_t set) { return [this, &sets, set] { return call(sets[set % sets.size()]); }; };

    // Warm-up: hot calls, alternating input sets, for at least warmup_seconds.
    // Each warm-up call's wall time (launch to synchronised) is kept: the parent compares it with
    // the timed calls' (a solution that behaves differently when timed shows there).
    size_t warm = 0;
    std::vector<double> warm_seconds;
    const auto w0 = Clock::now();
    do {
      const auto c0 = Clock::now();
      int rc = call(sets[warm % sets.size()]);
      device_->synchronize();
      warm_seconds.push_back(std::chrono::duration<double>(Clock::now() - c0).count());
      ++warm;
      if (rc != 0) return reply(BenchReply::failed(rc, "warmup"));
    } while (std::chrono::duration<double>(Clock::now() - w0).count() < pol.warmup_seconds);
    WorkLedger ledger;
    collect(ledger);  // so that the first sample's span holds that call's work only

    // Cold samples: perturb the set whose turn it is (undoing its previous call's perturbation),
    // poison the outputs, flush, time one call; keep the reservoir's calls for re-checking. All of
    // it but the call is outside the timed interval, and every call gets the same treatment, so
    // nothing tells a re-checked call from another before it has run.
    StoppingCriterion stop(pol);
    std::vector<double> samples, clocks, event_samples, host_call_seconds;
    size_t span_samples = 0;
    size_t throttled = 0;
    std::vector<std::vector<std::byte>> kept_outputs;
    BenchReply r;
    std::vector<RecheckedCall>& kept = r.rechecked;
    std::vector<std::optional<uint64_t>> perturbed(sets.size());  // the call whose perturbation each set holds
    const double max_clock = device_->max_sm_clock_mhz();
    const auto s0 = Clock::now();
    std::string reason;
    size_t it = 0;
    for (; reason.empty(); ++it) {
      const size_t set = it % sets.size();
      if (perturb) {
        if (perturbed[set]) perturb_set(sets[set], perturb_secret, *perturbed[set], /*undo=*/true);
        perturb_set(sets[set], perturb_secret, it, /*undo=*/false);
        perturbed[set] = it;
      }
      const std::optional<size_t> slot = reservoir.slot_for(it);
      poison_outputs();
      device_->synchronize();
      device_->flush_cache();
      int rc = 0;
      const Device::TimedCall t = device_->time_call(run_set(set), &rc);
      if (rc != 0) return reply(BenchReply::failed(rc, "timing", it));
      bool used_span = false;
      // Without the blocking kernel the host's time is meant to be in the sample: no span is offered
      // (target/call_timing.h).
      const double span = work_span_seconds(collect(ledger));
      const double seconds = cold_sample_seconds(t.seconds, pol.blocking_kernel ? span : NAN, &used_span);
      if (throttled_sample(t.sm_clock_start_mhz, t.sm_clock_mhz, max_clock, pol.throttle_threshold)) {
        ++throttled;
      } else {
        samples.push_back(seconds);
        event_samples.push_back(t.seconds);
        host_call_seconds.push_back(t.host_seconds);
        span_samples += used_span;
        if (std::isfinite(t.sm_clock_mhz)) clocks.push_back(t.sm_clock_mhz);
      }
      if (slot) {
        device_->synchronize();
        auto out = download_outputs();
        const bool settled = outputs_settled(out, t.seconds);
        RecheckedCall entry{it, set, hashes(sets[set]), settled};
        if (*slot == kept.size()) {
          kept.push_back(std::move(entry));
          kept_outputs.push_back(std::move(out));
        } else {
          kept.at(*slot) = std::move(entry);
          kept_outputs.at(*slot) = std::move(out);
        }
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - s0).count();
      reason = stop.should_stop(samples, elapsed);
      // Every sample throttled for twice the time limit: give up rather than loop forever; the
      // parent reports it.
      if (reason.empty() && samples.empty() && elapsed > 2 * pol.max_seconds) reason = "throttled";
    }
    // The sets back as generated, for hot timing, the tail checks and their final fingerprints.
    for (size_t s = 0; s < sets.size(); ++s)
      if (perturbed[s]) perturb_set(sets[s], perturb_secret, *perturbed[s], /*undo=*/true);
    device_->synchronize();
    // One payload of the kept outputs, each freed once copied (moe_swiglu's outputs are GBs), and
    // the second-look buffer with them: no more checked calls follow in this request.
    std::vector<std::byte>().swap(second_look_);
    std::vector<std::byte> payload;
    size_t total = 0;
    for (const auto& o : kept_outputs) total += o.size();
    payload.reserve(total);
    for (size_t k = 0; k < kept.size(); ++k) {
      payload.insert(payload.end(), kept_outputs[k].begin(), kept_outputs[k].end());
      std::vector<std::byte>().swap(kept_outputs[k]);
    }
    r.samples = samples;
    r.sm_clocks_mhz = clocks;
    r.max_sm_clock_mhz = max_clock;
    r.throttled = throttled;
    r.warmup_calls = warm;
    r.warmup_call_seconds = warm_seconds;
    r.stop_reason = reason;
    r.wall_seconds = std::chrono::duration<double>(Clock::now() - s0).count();
    r.timed_calls = it;
    r.event_samples = event_samples;
    r.host_call_seconds = host_call_seconds;
    r.span_samples = span_samples;

    // Hot timing: enough back-to-back calls to fill hot_seconds at the cold median, 10 to 1000.
    if (!samples.empty()) {
      std::vector<double> sorted = samples;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      const size_t n = std::clamp<size_t>(static_cast<size_t>(pol.hot_seconds / std::max(median, 1e-9)), 10, 1000);
      std::vector<std::function<int()>> calls;
      for (size_t i = 0; i < n; ++i) calls.push_back(run_set(i));
      int rc = 0;
      std::string mode;
      const double per_call = device_->time_hot(calls, &rc, &mode);
      if (rc != 0) return reply(BenchReply::failed(rc, "hot timing"));
      r.hot = HotTiming{per_call, n, mode};
      collect(ledger);
    }

    // The steady floor (TimingPolicy::steady_floor): batches of calls back to back on the stream
    // with their launches, never replayed from a graph, whatever the hot timing above used.
    // A batch's time per call is the larger of the target's interval (on cuda the events around
    // the batch) and the host's own time from the first call's entry to the last one's return: a
    // GPU shared with another process's context holds this one's work while the host enqueues it,
    // and the events alone then show the kernels back to back, the launches' cost hidden.
    if (pol.steady_floor && !samples.empty()) {
      const size_t n = steady_batch_calls(samples, host_call_seconds);
      Clock::time_point first{}, last{};
      std::vector<std::function<int()>> calls;
      for (size_t i = 0; i < n; ++i)
        calls.push_back([&, i, call = run_set(i)] {
          if (i == 0) first = Clock::now();
          const int rc = call();
          if (i + 1 == n) last = Clock::now();
          return rc;
        });
      SteadyTiming steady;
      steady.calls = n;
      device_->set_hot_capture(false);
      for (int b = 0; b < kSteadyBatches; ++b) {
        int rc = 0;
        std::string mode;
        const double per_call = device_->time_hot(calls, &rc, &mode);
        if (rc != 0) return reply(BenchReply::failed(rc, "steady timing"));
        const double host_per_call = std::chrono::duration<double>(last - first).count() / static_cast<double>(n);
        steady.batch_seconds.push_back(std::max(per_call, host_per_call));
        steady.host_batch_seconds.push_back(host_per_call);
      }
      device_->set_hot_capture(pol.hot_capture);
      r.steady = std::move(steady);
      collect(ledger);
    }

    // Device-wide cross-checks: how long the device stays busy after kb_run returns.
    for (int i = 0; i < pol.tail_checks; ++i) {
      int rc = 0;
      device_->flush_cache();  // cold, as in the samples: hidden work runs at its full length
      device_->synchronize();
      auto t = device_->tail_check(run_set(static_cast<size_t>(i)), &rc);
      if (rc != 0) return reply(BenchReply::failed(rc, "tail check"));
      if (!t) break;
      r.tail_checks.push_back({t->stream_seconds, t->tail_seconds, t->sync_latency_seconds});
    }
    collect(ledger);
    r.gpu_work = ledger.to_json(device_->monitor_status());

    for (const auto& s : sets) r.input_hashes.push_back(hashes(s));
    r.weight_hashes = hashes(weights_);
    timed_seeds_ = seeds;  // the sets the confirmation's copies are made of
    reply(r, payload.data(), payload.size());
  }

  // The timing's confirmation (eval/timing_confirmation.h). Prepare: K input copies, copy i of the
  // last bench's set i mod S as generated, and K poisoned output sets. Nothing here depends on the
  // secret the confirmation's calls are perturbed by: the worker has not been given it yet.
  void confirm_prepare(const ConfirmPrepareRequest& req) {
    if (timed_seeds_.empty()) throw std::runtime_error("confirm_prepare before any bench request");
    if (req.calls == 0) throw std::runtime_error("confirm_prepare of zero calls");
    confirm_inputs_.clear();
    confirm_outputs_.clear();
    const size_t sets = timed_seeds_.size();
    for (size_t i = 0; i < req.calls; ++i) {
      confirm_inputs_.push_back(allocate(problem_.inputs));
      if (i < sets) {
        fill(confirm_inputs_.back(), problem_.inputs, timed_seeds_[i], 0);
      } else {  // a copy of the set's first copy, cheaper than generating it again
        for (size_t t = 0; t < problem_.inputs.size(); ++t)
          device_->copy(confirm_inputs_.back()[t]->ptr, confirm_inputs_[i % sets][t]->ptr, confirm_inputs_[i % sets][t]->bytes);
      }
      confirm_outputs_.push_back(allocate(problem_.outputs));
      poison(confirm_outputs_.back());
    }
    device_->synchronize();
    WorkLedger discard;
    collect(discard);  // kbench's own work so far; the confirmation's ledger holds its calls only
    reply(ConfirmPrepareReply{req.calls});
  }

  // Run: call i on copy i perturbed as call i of the secret, into output set i, back to back as
  // hot calls run; then every output set's fingerprint. The parent times this request by its own
  // clock: the reply is the worker's commitment to K results it can only have computed after the
  // secret arrived.
  void confirm(const ConfirmRequest& req) {
    if (confirm_inputs_.empty()) throw std::runtime_error("confirm before confirm_prepare");
    for (size_t i = 0; i < confirm_inputs_.size(); ++i) {
      perturb_set(confirm_inputs_[i], req.secret, i, /*undo=*/false);
      const int rc = call(confirm_inputs_[i], confirm_outputs_[i]);
      if (rc != 0) return reply(ConfirmReply::failed(rc, i));
    }
    device_->synchronize();
    std::vector<std::pair<const void*, size_t>> buffers;
    for (const auto& set : confirm_outputs_)
      for (const auto& o : set) buffers.emplace_back(o->ptr, o->bytes);
    const std::vector<uint64_t> flat = device_->hash_many(buffers, hash_key_);
    ConfirmReply r;
    const size_t per_call = problem_.outputs.size();
    for (size_t i = 0; i < confirm_outputs_.size(); ++i)
      r.output_hashes.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i * per_call),
                                   flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * per_call));
    WorkLedger ledger;
    collect(ledger);
    r.gpu_work = ledger.to_json(device_->monitor_status());
    reply(r);
  }

  // Fetch: one call's outputs, its (perturbed) inputs' fingerprints and the weights'; then the
  // copies are freed.
  void confirm_fetch(const ConfirmFetchRequest& req) {
    if (req.call >= confirm_outputs_.size())
      throw std::runtime_error("confirm_fetch of call " + std::to_string(req.call) + " of " +
                               std::to_string(confirm_outputs_.size()));
    device_->synchronize();
    std::vector<std::byte> payload;
    for (const auto& o : confirm_outputs_[req.call]) {
      const size_t at = payload.size();
      payload.resize(at + o->bytes);
      device_->download(payload.data() + at, o->ptr, o->bytes);
    }
    ConfirmFetchReply r{hashes(confirm_inputs_[req.call]), hashes(weights_)};
    confirm_inputs_.clear();
    confirm_outputs_.clear();
    reply(r, payload.data(), payload.size());
  }

  Problem problem_;
  const ShapeCase& shape_;
  std::unique_ptr<Target> target_;
  std::unique_ptr<Device> device_;
  void* lib_ = nullptr;
  int (*setup_)(const kb_problem*, void**) = nullptr;
  int (*run_)(void*, const kb_call*) = nullptr;
  void (*teardown_)(void*) = nullptr;
  void* state_ = nullptr;
  bool state_set_ = false;
  uint64_t hash_key_ = 0;
  ChannelAuth auth_;
  TensorList weights_, outputs_, prev_inputs_;
  std::vector<uint64_t> timed_seeds_;                      // the last bench's input sets
  std::vector<TensorList> confirm_inputs_, confirm_outputs_;  // the confirmation's copies
  std::vector<std::byte> second_look_;  // outputs_settled's second download
  std::vector<DLTensor> weight_views_;
  std::vector<const char*> dim_names_;
};

}  // namespace

int worker_main(const WorkerArgs& args) {
  std::unique_ptr<Worker> w;
  // Triton's cache, where the parent reads the kernels a Python solution compiled
  // (eval/jit_kernels.h); set before the solution's library (the bridge) starts Python.
  if (!args.jit_cache.empty()) setenv("TRITON_CACHE_DIR", args.jit_cache.c_str(), 1);
  try {
    w = std::make_unique<Worker>(args);
    send_message(kWorkerReplyFd, ReadyReply{true, ""});
  } catch (const std::exception& e) {
    fprintf(stderr, "[kbench worker] %s\n", e.what());
    try {
      // std::bad_alloc: an allocation failed at the worker's memory limit (eval/worker_limits.h).
      const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
      send_message(kWorkerReplyFd, ReadyReply{false, e.what(), oom});
    } catch (...) {
    }
    return 3;
  }
  try {
    for (;;) {
      Message m = receive_message(kWorkerRequestFd);
      if (!w->serve(m)) return 0;
    }
  } catch (const ChannelClosed&) {
    return 0;  // the parent is gone: nothing left to serve
  } catch (const std::exception& e) {
    fprintf(stderr, "[kbench worker] %s\n", e.what());
    try {
      const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
      w->reply(ErrorReply{e.what(), oom});
    } catch (...) {
    }
    return 3;
  }
}

}  // namespace kb
