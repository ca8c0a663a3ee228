#include "runtime/host/host_driver.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "runtime/fork.h"
#include "runtime/host/capture.h"
#include "runtime/host/busy_clock.h"
#include "runtime/host/device_access.h"
#include "runtime/host/event.h"
#include "runtime/host/fault.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/memory.h"
#include "runtime/host/memory_copy.h"
#include "runtime/host/stream.h"
#include "runtime/host/sticky_error.h"
#include "runtime/host/work_count.h"

namespace accel::rt::host {
namespace {

// Copies and memsets up to this size are short work (StreamImpl::submit): on an idle stream
// they run on the caller, which is faster than waking the worker.
constexpr size_t kShortCopyBytes = 64 << 10;

struct Device {
  Device(int index, bool launch_blocking)
      : default_stream(index, kLowestPriority, error, launch_blocking) {}

  StickyError error;
  DeviceErrorRecord kernel_error;  // written by kernels, taken at synchronisation
  StreamImpl default_stream;
  std::mutex mu;
  // Created streams. shared_ptr so that deviceSynchronize can wait on one that is destroyed
  // meanwhile.
  std::vector<std::shared_ptr<StreamImpl>> streams;
};

class HostDriver final : public Driver {
 public:
  explicit HostDriver(const HostConfig& config)
      : config_(config), memory_(config.devices, config.capacity, config.protect) {
    devices_.reserve(config.devices);
    for (int d = 0; d < config.devices; ++d) {
      devices_.push_back(std::make_unique<Device>(d, config.launch_blocking));
    }
    processFaults();  // a malformed TORCH_ACCEL_FAULTS fails at start-up, not mid-run
  }

  ~HostDriver() override {
    // Streams finish their work before the memory it touches is unmapped.
    devices_.clear();
    for (void* p : host_allocations_) std::free(p);
  }

  const char* name() const override { return "host"; }

  int deviceCount() override { return config_.devices; }

  Error getDeviceProperties(int device, DeviceProperties* props) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (props == nullptr) return Error::InvalidValue;
    *props = DeviceProperties{};
    props->name = "accel host device " + std::to_string(device);
    props->total_memory = config_.capacity;
    props->multi_processor_count =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    props->major = 1;
    props->minor = 0;
    return Error::Success;
  }

  Error deviceSynchronize(int device) override {
    if (!valid(device)) return Error::InvalidDevice;
    // Waiting for a capturing stream would wait for work that is recorded, never run.
    bool capturing = false;
    forEachStream(device, [&](StreamImpl& s) {
      if (auto capture = s.capture()) {
        capture->invalidate(Error::CaptureUnsupported);
        capturing = true;
      }
    });
    if (capturing) return Error::CaptureUnsupported;
    drainAll(device);
    return stickyStatus(device);
  }

  Error malloc(int device, void** ptr, size_t size) override {
    watchForFork();  // device memory is the runtime's state: a forked child must not share it
    if (valid(device) && ptr != nullptr && size > 0 && processFaults().inject(FaultSite::Malloc)) {
      *ptr = nullptr;
      return Error::OutOfMemory;
    }
    return memory_.allocate(device, size, ptr);
  }

  Error free(int device, void* ptr) override {
    if (!valid(device)) return Error::InvalidDevice;
    // Like cudaFree: wait for queued work that may still touch the memory.
    drainAll(device);
    return memory_.release(device, ptr);
  }

  Error memGetInfo(int device, size_t* free_bytes, size_t* total_bytes) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (free_bytes == nullptr || total_bytes == nullptr) return Error::InvalidValue;
    *total_bytes = memory_.capacity();
    *free_bytes = memory_.capacity() - memory_.used(device);
    return Error::Success;
  }

  int pointerDevice(const void* ptr) override { return memory_.owner(ptr); }

  Error mallocHost(void** ptr, size_t size) override {
    if (ptr == nullptr) return Error::InvalidValue;
    *ptr = nullptr;
    if (size == 0) return Error::Success;
    // 512-byte aligned like device memory, so a pinned staging buffer behaves the same.
    if (posix_memalign(ptr, 512, size) != 0) {
      *ptr = nullptr;
      return Error::OutOfMemory;
    }
    std::lock_guard<std::mutex> lock(host_mu_);
    host_allocations_.insert(*ptr);
    return Error::Success;
  }

  Error freeHost(void* ptr) override {
    if (ptr == nullptr) return Error::Success;
    // Like cudaFreeHost: an asynchronous copy may still read or write it.
    for (int d = 0; d < config_.devices; ++d) drainAll(d);
    {
      std::lock_guard<std::mutex> lock(host_mu_);
      if (host_allocations_.erase(ptr) == 0) return Error::InvalidValue;
    }
    std::free(ptr);
    return Error::Success;
  }

  Error memcpyAsync(void* dst, const void* src, size_t bytes, MemcpyKind kind,
                    Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    if (bytes == 0) return Error::Success;
    if (dst == nullptr || src == nullptr) return Error::InvalidValue;
    const bool dst_device = kind == MemcpyKind::HostToDevice || kind == MemcpyKind::DeviceToDevice;
    const bool src_device = kind == MemcpyKind::DeviceToHost || kind == MemcpyKind::DeviceToDevice;
    if (!validSide(dst, bytes, dst_device) || !validSide(src, bytes, src_device)) {
      return Error::InvalidValue;
    }
    if (processFaults().inject(FaultSite::Memcpy)) return Error::LaunchFailure;
    noteWorkQueued();
    return stream->submit([=] { copyMemory(dst, src, bytes); }, bytes <= kShortCopyBytes);
  }

  Error memsetAsync(void* dst, int value, size_t bytes, Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    if (bytes == 0) return Error::Success;
    if (dst == nullptr || !memory_.contains(dst, bytes)) return Error::InvalidValue;
    noteWorkQueued();
    return stream->submit([=] { std::memset(dst, value, bytes); }, bytes <= kShortCopyBytes);
  }

  Stream defaultStream(int device) override {
    return valid(device) ? &devices_[device]->default_stream : nullptr;
  }

  Error streamCreate(int device, Stream* stream, int priority) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (stream == nullptr) return Error::InvalidValue;
    Device& d = *devices_[device];
    priority = std::clamp(priority, kHighestPriority, kLowestPriority);
    auto s = std::make_shared<StreamImpl>(device, priority, d.error, config_.launch_blocking);
    std::lock_guard<std::mutex> lock(d.mu);
    d.streams.push_back(s);
    *stream = s.get();
    return Error::Success;
  }

  Error streamDestroy(Stream stream) override {
    if (stream == nullptr || !valid(stream->device)) return Error::InvalidValue;
    std::shared_ptr<StreamImpl> doomed;  // destroyed (drained and joined) outside the lock
    Device& d = *devices_[stream->device];
    std::lock_guard<std::mutex> lock(d.mu);
    auto it = std::find_if(d.streams.begin(), d.streams.end(),
                           [&](const auto& s) { return s.get() == stream; });
    if (it == d.streams.end()) return Error::InvalidValue;  // unknown, or the default stream
    doomed = std::move(*it);
    d.streams.erase(it);
    return Error::Success;
  }

  Error streamSynchronize(Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    if (Error e = refuseIfCapturing(stream); e != Error::Success) return e;
    stream->drain();
    return stickyStatus(stream->device);
  }

  Error streamQuery(Stream stream) override {
    if (stream == nullptr) return Error::InvalidValue;
    if (Error e = refuseIfCapturing(stream); e != Error::Success) return e;
    return stream->idle() ? Error::Success : Error::NotReady;
  }

  Error streamWaitEvent(Stream stream, Event event) override {
    if (stream == nullptr || event == nullptr) return Error::InvalidValue;
    return event->makeStreamWait(stream);
  }

  int streamDevice(Stream stream) override { return stream == nullptr ? -1 : stream->device; }

  int streamPriority(Stream stream) override {
    return stream == nullptr ? kLowestPriority : stream->priority;
  }

  Error launchHostFunc(Stream stream, HostFn fn, void* user_data) override {
    if (stream == nullptr || fn == nullptr) return Error::InvalidValue;
    return stream->enqueue([fn, user_data] { fn(user_data); });
  }

  Error launchHostTask(Stream stream, std::function<void()> task) override {
    return host::enqueue(stream, std::move(task));
  }

  void* nativeStream(Stream stream) override { return stream; }

  Error streamBeginCapture(Stream stream, CaptureMode mode) override {
    if (stream == nullptr || !valid(stream->device)) return Error::InvalidValue;
    // As CUDA's legacy default stream, which synchronises with every other stream.
    if (stream == &devices_[stream->device]->default_stream) return Error::NotSupported;
    auto capture = std::make_shared<Capture>(mode, stream);
    if (stream->capture() || !stream->joinCapture(capture)) return Error::CaptureUnsupported;
    return Error::Success;
  }

  Error streamEndCapture(Stream stream, GraphExec* graph) override {
    if (stream == nullptr || graph == nullptr) return Error::InvalidValue;
    *graph = nullptr;
    auto capture = stream->capture();
    if (!capture || capture->origin != stream) return Error::InvalidValue;
    std::vector<Work> work;
    std::vector<Stream> streams;
    const Error status = capture->finish(&work, &streams);
    for (Stream s : streams) s->leaveCapture(capture.get());
    if (status != Error::Success) return status;
    *graph = new GraphExecImpl{std::make_shared<const std::vector<Work>>(std::move(work)),
                               stream->device};
    return Error::Success;
  }

  uint64_t streamCaptureId(Stream stream) override {
    if (stream == nullptr) return 0;
    auto capture = stream->capture();
    return capture ? capture->id : 0;
  }

  Error graphLaunch(GraphExec graph, Stream stream) override {
    if (graph == nullptr || stream == nullptr) return Error::InvalidValue;
    if (graph->device != stream->device) return Error::InvalidValue;
    noteWorkQueued();  // one work item, as a cudaGraphLaunch
    return stream->enqueue([work = graph->work] {
      for (const Work& w : *work) w();
    });
  }

  Error graphDestroy(GraphExec graph) override {
    delete graph;  // queued launches share the recording
    return Error::Success;
  }

  Error graphDebugDump(GraphExec graph, const char* path) override {
    if (graph == nullptr || path == nullptr) return Error::InvalidValue;
    FILE* f = std::fopen(path, "w");
    if (f == nullptr) return Error::InvalidValue;
    // The recording is one chain: each node depends on the one before.
    std::fprintf(f, "digraph accel_graph {\n  // accel:%d, host driver, %zu nodes\n", graph->device,
                 graph->work->size());
    for (size_t i = 0; i < graph->work->size(); ++i) {
      std::fprintf(f, "  n%zu [label=\"node %zu\"];\n", i, i);
      if (i > 0) std::fprintf(f, "  n%zu -> n%zu;\n", i - 1, i);
    }
    std::fprintf(f, "}\n");
    return std::fclose(f) == 0 ? Error::Success : Error::InvalidValue;
  }

  Error streamFromNative(int device, void* native, Stream* stream) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (stream == nullptr) return Error::InvalidValue;
    Device& d = *devices_[device];
    if (native == &d.default_stream) {
      *stream = &d.default_stream;
      return Error::Success;
    }
    std::lock_guard<std::mutex> lock(d.mu);
    for (const auto& s : d.streams) {
      if (s.get() == native) {
        *stream = s.get();
        return Error::Success;
      }
    }
    return Error::InvalidValue;
  }

  Error ipcGetMemHandle(void* base, IpcMemHandle* handle) override {
    if (handle == nullptr) return Error::InvalidValue;
    *handle = IpcMemHandle{};
    if (Error e = memory_.sharedFile(base, &handle->fd, &handle->size); e != Error::Success) {
      return e;
    }
    struct stat st {};
    if (fstat(handle->fd, &st) != 0) return Error::Unknown;
    handle->id = static_cast<uint64_t>(st.st_ino);  // unique among the memfds alive
    return Error::Success;
  }

  Error ipcOpenMemHandle(int device, const IpcMemHandle& handle, void** ptr) override {
    return memory_.import(device, handle.fd, handle.size, ptr);
  }

  Error ipcCloseMemHandle(void* ptr) override {
    // Work queued by this process may still use the memory.
    for (int d = 0; d < config_.devices; ++d) drainAll(d);
    return memory_.closeImported(ptr);
  }

  Error deviceUtilization(int device, int* percent) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (percent == nullptr) return Error::InvalidValue;
    *percent = busyClock(device).utilization(std::chrono::seconds(1));
    return Error::Success;
  }

  // Every simulated device lives in the same host memory.
  Error deviceCanAccessPeer(int device, int peer, bool* can_access) override {
    if (!valid(device) || !valid(peer)) return Error::InvalidDevice;
    if (can_access == nullptr) return Error::InvalidValue;
    *can_access = true;
    return Error::Success;
  }

  Error eventCreate(int device, Event* event, unsigned flags) override {
    if (!valid(device)) return Error::InvalidDevice;
    if (event == nullptr) return Error::InvalidValue;
    *event = new EventImpl(device, flags);
    return Error::Success;
  }

  Error eventDestroy(Event event) override {
    delete event;  // pending markers and waits keep the event's state alive
    return Error::Success;
  }

  Error eventRecord(Event event, Stream stream) override {
    if (event == nullptr || stream == nullptr) return Error::InvalidValue;
    return event->record(stream);
  }

  Error eventQuery(Event event) override {
    return event == nullptr ? Error::InvalidValue : event->query();
  }

  Error eventSynchronize(Event event) override {
    if (event == nullptr) return Error::InvalidValue;
    event->wait();
    return stickyStatus(event->device);
  }

  Error eventElapsedTime(float* ms, Event start, Event end) override {
    if (ms == nullptr || start == nullptr || end == nullptr) return Error::InvalidValue;
    return EventImpl::elapsed(ms, *start, *end);
  }

  bool threadWorkCount(uint64_t* count) override {
    *count = t_work_queued;
    return true;
  }

  bool streamWorkCount(Stream stream, uint64_t* count) override {
    if (stream == nullptr) return false;
    *count = stream->queuedCount();
    return true;
  }

  Error getLastError(int device) override {
    if (!valid(device)) return Error::InvalidDevice;
    absorbKernelError(device);
    return devices_[device]->error.take();
  }

  std::string lastErrorMessage(int device) override {
    return valid(device) ? devices_[device]->error.message() : std::string();
  }

  DeviceErrorRecord* deviceErrorRecord(int device) override {
    return valid(device) ? &devices_[device]->kernel_error : nullptr;
  }

  std::unique_ptr<HostAccessScope> hostAccess() override {
    struct Scope final : HostAccessScope {
      DeviceAccess access;
    };
    return std::make_unique<Scope>();
  }

 private:
  bool valid(int device) const { return device >= 0 && device < config_.devices; }

  template <class F>
  void forEachStream(int device, F f) {
    Device& d = *devices_[device];
    std::vector<std::shared_ptr<StreamImpl>> streams;
    {
      std::lock_guard<std::mutex> lock(d.mu);
      streams = d.streams;
    }
    f(d.default_stream);
    for (auto& s : streams) f(*s);
  }

  // Waits for the queued work of every stream of `device` (recorded work is not queued).
  void drainAll(int device) {
    forEachStream(device, [](StreamImpl& s) { s.drain(); });
  }

  // Synchronising with a capturing stream is an error that invalidates the capture, as in CUDA.
  static Error refuseIfCapturing(Stream stream) {
    auto capture = stream->capture();
    if (!capture) return Error::Success;
    capture->invalidate(Error::CaptureUnsupported);
    return Error::CaptureUnsupported;
  }

  // A kernel's recorded input error becomes the device's sticky error.
  void absorbKernelError(int device) {
    std::string message = takeDeviceError(devices_[device]->kernel_error);
    if (!message.empty()) devices_[device]->error.set(std::move(message));
  }

  Error stickyStatus(int device) {
    absorbKernelError(device);
    return devices_[device]->error.pending() ? Error::LaunchFailure : Error::Success;
  }

  // A copy endpoint: device memory must hold the whole range; host memory must not be
  // device memory (a wrong kind is a caller bug that CUDA would also reject).
  bool validSide(const void* p, size_t bytes, bool device) const {
    return device ? memory_.contains(p, bytes) : memory_.owner(p) < 0;
  }

  const HostConfig config_;
  DeviceMemory memory_;  // declared before devices_: streams are destroyed first
  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex host_mu_;
  std::unordered_set<void*> host_allocations_;
};

}  // namespace

std::unique_ptr<Driver> makeHostDriver(const HostConfig& config) {
  return std::make_unique<HostDriver>(config);
}

}  // namespace accel::rt::host
