// The CUDA driver: rt::Driver over the CUDA runtime API. Built into libaccel_cuda.so, which
// the runtime loads with dlopen (see csrc/runtime/cuda_plugin.cpp) through the two
// extern "C" entry points at the bottom.
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <new>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_error.h"
#include "runtime/cuda/cuda_stream.h"
#include "runtime/driver.h"

namespace accel::rt {
namespace {

using cuda::CudaStream;
using cuda::lastMessage;

CudaStream* cast(Stream s) { return cuda::toCudaStream(s); }
cudaEvent_t cast(Event e) { return reinterpret_cast<cudaEvent_t>(e); }

// What rt::GraphExec points to: the captured graph (kept for debug dumps) and its
// instantiation.
struct CudaGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  int device = 0;
};

CudaGraph* cast(GraphExec g) { return reinterpret_cast<CudaGraph*>(g); }

// While alive, this thread may make calls a capture forbids elsewhere: the caching allocator
// calls cudaMalloc while a graph captures (its private pool grows), as torch.cuda's does.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { (void)cuda::probe(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  ~RelaxedCaptureMode() { (void)cuda::probe(cudaThreadExchangeStreamCaptureMode(&mode_)); }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

class CudaDriver final : public Driver {
 public:
  explicit CudaDriver(int devices) {
    defaults_.reserve(devices);
    for (int d = 0; d < devices; ++d) defaults_.push_back(CudaStream{nullptr, d, kLowestPriority});
    records_.assign(devices, nullptr);
  }

  const char* name() const override { return "cuda"; }

  int deviceCount() override { return static_cast<int>(defaults_.size()); }

  Error getDeviceProperties(int device, DeviceProperties* props) override {
    if (props == nullptr) return Error::InvalidValue;
    cudaDeviceProp p{};
    ACCEL_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, device));
    *props = DeviceProperties{};
    props->name = p.name;
    props->total_memory = p.totalGlobalMem;
    props->multi_processor_count = p.multiProcessorCount;
    props->major = p.major;
    props->minor = p.minor;
    props->warp_size = p.warpSize;
    props->max_threads_per_block = p.maxThreadsPerBlock;
    props->max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
    props->regs_per_multiprocessor = p.regsPerMultiprocessor;
    return Error::Success;
  }

  Error deviceSynchronize(int device) override {
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    return afterSync(device, ACCEL_CUDA(cudaDeviceSynchronize()));
  }

  Error malloc(int device, void** ptr, size_t size) override {
    if (ptr == nullptr) return Error::InvalidValue;
    *ptr = nullptr;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    RelaxedCaptureMode relaxed;
    return ACCEL_CUDA(cudaMalloc(ptr, size));
  }

  Error free(int device, void* ptr) override {
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    return ACCEL_CUDA(cudaFree(ptr));
  }

  Error memGetInfo(int device, size_t* free_bytes, size_t* total_bytes) override {
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    return ACCEL_CUDA(cudaMemGetInfo(free_bytes, total_bytes));
  }

  int pointerDevice(const void* ptr) override {
    cudaPointerAttributes attr{};
    if (!cuda::probe(cudaPointerGetAttributes(&attr, ptr))) return -1;  // a foreign pointer
    return attr.type == cudaMemoryTypeDevice ? attr.device : -1;
  }

  Error mallocHost(void** ptr, size_t size) override {
    if (ptr == nullptr) return Error::InvalidValue;
    *ptr = nullptr;
    return ACCEL_CUDA(cudaHostAlloc(ptr, size, cudaHostAllocDefault));
  }

  Error freeHost(void* ptr) override { return ACCEL_CUDA(cudaFreeHost(ptr)); }

  Error memcpyAsync(void* dst, const void* src, size_t bytes, MemcpyKind kind,
                    Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaMemcpyAsync(dst, src, bytes, toCuda(kind), cast(stream)->handle));
  }

  Error memsetAsync(void* dst, int value, size_t bytes, Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaMemsetAsync(dst, value, bytes, cast(stream)->handle));
  }

  Stream defaultStream(int device) override {
    if (device < 0 || device >= deviceCount()) return nullptr;
    return reinterpret_cast<Stream>(&defaults_[device]);
  }

  Error streamCreate(int device, Stream* stream, int priority) override {
    if (stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    // torch.cuda creates its pool streams non-blocking: they do not sync with stream 0.
    cudaStream_t handle = nullptr;
    ACCEL_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithPriority(&handle, cudaStreamNonBlocking, priority));
    int actual = priority;
    (void)ACCEL_CUDA(cudaStreamGetPriority(handle, &actual));  // CUDA clamps to the device's range
    *stream = reinterpret_cast<Stream>(new CudaStream{handle, device, actual});
    return Error::Success;
  }

  Error streamDestroy(Stream stream) override {
    if (stream == nullptr || isDefault(stream)) return Error::InvalidValue;
    CudaStream* s = cast(stream);
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(s->device));
    const Error e = ACCEL_CUDA(cudaStreamDestroy(s->handle));
    delete s;
    return e;
  }

  Error streamSynchronize(Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return afterSync(cast(stream)->device, ACCEL_CUDA(cudaStreamSynchronize(cast(stream)->handle)));
  }

  Error streamQuery(Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaStreamQuery(cast(stream)->handle));
  }

  Error streamWaitEvent(Stream stream, Event event) override {
    if (stream == nullptr || event == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaStreamWaitEvent(cast(stream)->handle, cast(event), 0));
  }

  int streamDevice(Stream stream) override { return stream == nullptr ? -1 : cast(stream)->device; }

  int streamPriority(Stream stream) override {
    return stream == nullptr ? kLowestPriority : cast(stream)->priority;
  }

  Error launchHostFunc(Stream stream, HostFn fn, void* user_data) override {
    if (stream == nullptr || fn == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaLaunchHostFunc(cast(stream)->handle, fn, user_data));
  }

  void* nativeStream(Stream stream) override {
    return stream == nullptr ? nullptr : static_cast<void*>(cuda::nativeStream(stream));
  }

  Error streamBeginCapture(Stream stream, CaptureMode mode) override {
    if (stream == nullptr) return Error::InvalidValue;
    if (isDefault(stream)) return Error::NotSupported;  // the legacy stream cannot capture
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(
        cudaStreamBeginCapture(cast(stream)->handle, static_cast<cudaStreamCaptureMode>(mode)));
  }

  Error streamEndCapture(Stream stream, GraphExec* graph) override {
    if (stream == nullptr || graph == nullptr) return Error::InvalidValue;
    *graph = nullptr;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    auto g = std::make_unique<CudaGraph>();
    g->device = cast(stream)->device;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaStreamEndCapture(cast(stream)->handle, &g->graph));
    if (Error e = ACCEL_CUDA(cudaGraphInstantiate(&g->exec, g->graph, 0)); e != Error::Success) {
      (void)cuda::probe(cudaGraphDestroy(g->graph));
      return e;
    }
    *graph = reinterpret_cast<GraphExec>(g.release());
    return Error::Success;
  }

  uint64_t streamCaptureId(Stream stream) override {
    if (stream == nullptr || isDefault(stream)) return 0;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    if (!cuda::probe(cudaStreamGetCaptureInfo(cast(stream)->handle, &status, &id))) return 0;
    return status == cudaStreamCaptureStatusNone ? 0 : id;
  }

  Error graphLaunch(GraphExec graph, Stream stream) override {
    if (graph == nullptr || stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaGraphLaunch(cast(graph)->exec, cast(stream)->handle));
  }

  Error graphDestroy(GraphExec graph) override {
    if (graph == nullptr) return Error::InvalidValue;
    std::unique_ptr<CudaGraph> g(cast(graph));
    // CUDA defers the release of an executable graph that is still running.
    const Error e = ACCEL_CUDA(cudaGraphExecDestroy(g->exec));
    (void)cuda::probe(cudaGraphDestroy(g->graph));
    return e;
  }

  Error graphDebugDump(GraphExec graph, const char* path) override {
    if (graph == nullptr || path == nullptr) return Error::InvalidValue;
    return ACCEL_CUDA(
        cudaGraphDebugDotPrint(cast(graph)->graph, path, cudaGraphDebugDotFlagsVerbose));
  }

  // The wrapper lives as long as the process: torch.cuda's external streams do the same.
  Error streamFromNative(int device, void* native, Stream* stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    auto handle = static_cast<cudaStream_t>(native);
    if (handle == nullptr) {  // the legacy default stream
      *stream = defaultStream(device);
      return *stream == nullptr ? Error::InvalidDevice : Error::Success;
    }
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    int priority = 0;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaStreamGetPriority(handle, &priority));
    *stream = reinterpret_cast<Stream>(new CudaStream{handle, device, priority});
    return Error::Success;
  }

  Error ipcGetMemHandle(void* base, IpcMemHandle* handle) override {
    if (handle == nullptr) return Error::InvalidValue;
    *handle = IpcMemHandle{};
    cudaIpcMemHandle_t h;
    static_assert(sizeof(h) <= sizeof(handle->bytes), "cudaIpcMemHandle_t does not fit");
    ACCEL_CUDA_RETURN_IF_ERROR(cudaIpcGetMemHandle(&h, base));
    std::memcpy(handle->bytes, &h, sizeof(h));
    // The handle's bytes identify the allocation in every process (FNV-1a of them).
    uint64_t id = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(h); ++i) {
      id = (id ^ static_cast<unsigned char>(handle->bytes[i])) * 1099511628211ull;
    }
    handle->id = id;
    return Error::Success;
  }

  Error ipcOpenMemHandle(int device, const IpcMemHandle& handle, void** ptr) override {
    if (ptr == nullptr) return Error::InvalidValue;
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handle.bytes, sizeof(h));
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    return ACCEL_CUDA(cudaIpcOpenMemHandle(ptr, h, cudaIpcMemLazyEnablePeerAccess));
  }

  Error ipcCloseMemHandle(void* ptr) override { return ACCEL_CUDA(cudaIpcCloseMemHandle(ptr)); }

  Error deviceCanAccessPeer(int device, int peer, bool* can_access) override {
    if (can_access == nullptr) return Error::InvalidValue;
    int can = 0;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can, device, peer));
    *can_access = can != 0;
    return Error::Success;
  }

  Error eventCreate(int device, Event* event, unsigned flags) override {
    if (event == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    cudaEvent_t e = nullptr;
    const unsigned cuda_flags =
        (flags & kEventDisableTiming) ? cudaEventDisableTiming : cudaEventDefault;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cuda_flags));
    *event = reinterpret_cast<Event>(e);
    return Error::Success;
  }

  Error eventDestroy(Event event) override {
    return event == nullptr ? Error::InvalidValue : ACCEL_CUDA(cudaEventDestroy(cast(event)));
  }

  Error eventRecord(Event event, Stream stream) override {
    if (event == nullptr || stream == nullptr) return Error::InvalidValue;
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(cast(stream)->device));
    return ACCEL_CUDA(cudaEventRecord(cast(event), cast(stream)->handle));
  }

  Error eventQuery(Event event) override {
    if (event == nullptr) return Error::InvalidValue;
    return ACCEL_CUDA(cudaEventQuery(cast(event)));
  }

  Error eventSynchronize(Event event) override {
    if (event == nullptr) return Error::InvalidValue;
    const Error e = ACCEL_CUDA(cudaEventSynchronize(cast(event)));
    int device = 0;
    (void)cuda::probe(cudaGetDevice(&device));  // the torch layer made the event's device current
    return afterSync(device, e);
  }

  Error eventElapsedTime(float* ms, Event start, Event end) override {
    if (ms == nullptr || start == nullptr || end == nullptr) return Error::InvalidValue;
    return ACCEL_CUDA(cudaEventElapsedTime(ms, cast(start), cast(end)));
  }

  Error getLastError(int device) override {
    ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    return ACCEL_CUDA(cudaGetLastError());
  }

  std::string lastErrorMessage(int device) override { return lastMessage(); }

  std::unique_ptr<HostAccessScope> hostAccess() override { return nullptr; }

  // Mapped pinned host memory: kernels write it through the unified address space, the host
  // reads it after a synchronisation without a copy.
  DeviceErrorRecord* deviceErrorRecord(int device) override {
    if (device < 0 || device >= deviceCount()) return nullptr;
    std::lock_guard<std::mutex> lock(records_mu_);
    if (records_[device] == nullptr) {
      void* p = nullptr;
      if (ACCEL_CUDA(cudaSetDevice(device)) != Error::Success ||
          ACCEL_CUDA(cudaHostAlloc(&p, sizeof(DeviceErrorRecord),
                                   cudaHostAllocMapped | cudaHostAllocPortable)) != Error::Success)
        return nullptr;
      records_[device] = new (p) DeviceErrorRecord();
    }
    return records_[device];
  }

 private:
  // A synchronisation that completed still fails when a kernel recorded an input error.
  Error afterSync(int device, Error e) {
    if (e != Error::Success || device < 0 || device >= deviceCount()) return e;
    std::lock_guard<std::mutex> lock(records_mu_);
    if (records_[device] == nullptr) return e;
    std::string message = takeDeviceError(*records_[device]);
    if (message.empty()) return e;
    lastMessage() = std::move(message);
    return Error::LaunchFailure;
  }

  static cudaMemcpyKind toCuda(MemcpyKind kind) {
    switch (kind) {
      case MemcpyKind::HostToHost: return cudaMemcpyHostToHost;
      case MemcpyKind::HostToDevice: return cudaMemcpyHostToDevice;
      case MemcpyKind::DeviceToHost: return cudaMemcpyDeviceToHost;
      case MemcpyKind::DeviceToDevice: return cudaMemcpyDeviceToDevice;
    }
    return cudaMemcpyDefault;
  }

  bool isDefault(Stream stream) const {
    const auto* s = cast(stream);
    return s >= defaults_.data() && s < defaults_.data() + defaults_.size();
  }

  std::vector<CudaStream> defaults_;  // one per device, never resized
  std::mutex records_mu_;
  std::vector<DeviceErrorRecord*> records_;  // per device, allocated on first use
};

std::string status_message;

}  // namespace
}  // namespace accel::rt

// The driver, or nullptr (with accel_cuda_status() saying why) when no GPU answers. Called
// once by the runtime's plugin loader; the driver lives for the whole process.
extern "C" accel::rt::Driver* accel_cuda_driver() {
  int count = 0;
  if (ACCEL_CUDA(cudaGetDeviceCount(&count)) != accel::rt::Error::Success) {
    accel::rt::status_message = "CUDA reports: " + accel::rt::cuda::lastMessage();
    return nullptr;
  }
  if (count == 0) {
    accel::rt::status_message = "CUDA found no device";
    return nullptr;
  }
  accel::rt::status_message.clear();
  static accel::rt::Driver* const driver = new accel::rt::CudaDriver(count);
  return driver;
}

extern "C" const char* accel_cuda_status() { return accel::rt::status_message.c_str(); }

// The CUDA architectures the plugin's kernels were compiled for ("80 90").
extern "C" const char* accel_cuda_arch_list() { return ACCEL_CUDA_ARCH_LIST; }
