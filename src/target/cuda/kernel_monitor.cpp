#include "target/cuda/kernel_monitor.h"

// cuda.h for its types only: kbench calls no driver API function directly, so that it starts on a
// machine without the driver (CI), where libcuda.so.1 does not exist.
#include <cuda.h>
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace kb {
namespace {

KernelMonitor* g_monitor = nullptr;
std::thread::id g_worker_thread;
thread_local bool t_in_call = false;

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // CUPTI requires 8-byte alignment.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (g_monitor && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) g_monitor->on_record(record);
  std::free(buffer);
}

// Stream-ordered work that is neither a kernel, a copy nor a memset, so that no activity record
// covers its time: host functions, waits on events or memory values, graph launches (which may
// hold host nodes). A call that enqueues any of these is timed by its events, not by the span of
// its records (worker/sampling.h).
bool holds_unrecorded_stream_work(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (id) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
        return true;
      default:
        return false;
    }
  }
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      return true;
    default:
      return false;
  }
}

void CUPTIAPI api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER && g_monitor)
    g_monitor->on_api_enter(cb->correlationId, holds_unrecorded_stream_work(domain, id));
}

bool ok(CUptiResult r, const char* what, std::string* why) {
  if (r == CUPTI_SUCCESS) return true;
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  *why = std::string(what) + " failed: " + (s ? s : "unknown CUPTI error");
  return false;
}

}  // namespace

KernelMonitor* KernelMonitor::start(cudaStream_t stream, std::string* why) {
  if (g_monitor) return g_monitor;
  if (const char* off = std::getenv("KBENCH_NO_KERNEL_MONITOR"); off && *off && std::strcmp(off, "0") != 0) {
    *why = "disabled by KBENCH_NO_KERNEL_MONITOR";
    return nullptr;
  }
  auto* m = new KernelMonitor();
  g_worker_thread = std::this_thread::get_id();
  CUpti_SubscriberHandle subscriber{};
  if (!ok(cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream), 0, &m->stream_id_), "cuptiGetStreamIdEx", why) ||
      !ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks", why) ||
      // Another CUPTI client (Nsight Systems/Compute attached) makes this fail with
      // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: evaluation then goes on without attribution.
      !ok(cuptiSubscribe(&subscriber, api_callback, nullptr), "cuptiSubscribe", why) ||
      !ok(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain(runtime)", why) ||
      !ok(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(driver)", why) ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(kernel)", why) ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(memcpy)", why) ||
      !ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(memset)", why) ||
      // Without it, kernel records carry no access policy window (l2_persistence).
      !ok(cuptiActivityEnableLaunchAttributes(1), "cuptiActivityEnableLaunchAttributes", why)) {
    delete m;  // a half-started CUPTI stays as it is; the worker goes on without attribution
    return nullptr;
  }
  g_monitor = m;
  // Any thread CUPTI starts for its buffers starts now, before the solution's sandbox forbids new
  // threads (worker/syscall_filter.h).
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  return m;
}

void KernelMonitor::mark_call(bool inside) { t_in_call = inside; }

void KernelMonitor::on_api_enter(uint32_t correlation_id, bool unrecorded_stream_work) {
  const bool worker = std::this_thread::get_id() == g_worker_thread;
  if (worker && !t_in_call) return;  // kbench's own launch (or kb_setup's): not attributed
  std::lock_guard<std::mutex> lock(mu_);
  origins_[correlation_id] = Origin{worker, generation_};
  unrecorded_stream_work_ = unrecorded_stream_work_ || unrecorded_stream_work;
}

void KernelMonitor::on_record(const void* record) {
  const auto* a = static_cast<const CUpti_Activity*>(record);
  GpuWork w;
  uint32_t correlation = 0, stream = 0;
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      w.name = k->name ? k->name : "?";
      w.start_ns = k->start;
      w.end_ns = k->end;
      w.device_launched = k->isDeviceLaunched != 0;
      w.persisting_l2 = k->pAccessPolicyWindow && k->pAccessPolicyWindow->hitProp == CU_ACCESS_PROPERTY_PERSISTING;
      correlation = k->correlationId;
      stream = k->streamId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
      w.name = "memcpy";
      w.kernel = false;
      w.start_ns = c->start;
      w.end_ns = c->end;
      correlation = c->correlationId;
      stream = c->streamId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      w.name = "memset";
      w.kernel = false;
      w.start_ns = s->start;
      w.end_ns = s->end;
      correlation = s->correlationId;
      stream = s->streamId;
      break;
    }
    default:
      return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = origins_.find(correlation);
  if (it == origins_.end()) return;  // kbench's own work
  it->second.seen = true;
  w.in_call = it->second.in_call;
  w.on_stream = stream == stream_id_;
  work_.push_back(std::move(w));
}

std::vector<GpuWork> KernelMonitor::collect() {
  {
    // Launches from here on belong to the next round.
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
  }
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mu_);
  // An entry goes once a record has named it and its round is over (every record of an earlier
  // launch is delivered: the caller waited for the device). Entries no record has named yet stay:
  // API calls that launch nothing (cudaGetLastError inside kb_run), and a launch from a thread of
  // the solution's racing with this collection, whose record must still be attributed later.
  for (auto it = origins_.begin(); it != origins_.end();)
    it = it->second.seen && it->second.generation < generation_ ? origins_.erase(it) : std::next(it);
  std::vector<GpuWork> out;
  out.swap(work_);
  if (unrecorded_stream_work_) {
    GpuWork w;
    w.name = "stream work without activity records (host function, wait, graph launch)";
    w.kernel = false;
    w.unrecorded = true;
    out.push_back(std::move(w));
    unrecorded_stream_work_ = false;
  }
  return out;
}

}  // namespace kb
