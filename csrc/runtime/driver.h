// The accel runtime: a driver API shaped like the CUDA runtime. Knows no torch.
//
// Two implementations exist: the host driver (csrc/runtime/host, always built) and the
// CUDA driver (csrc/runtime/cuda, a plugin loaded with dlopen). `driver()` returns the one
// selected by TORCH_ACCEL_DRIVER=host|cuda|auto.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/device_error.h"

namespace accel::rt {

enum class Error : int {
  Success = 0,
  OutOfMemory,    // device malloc could not be served
  InvalidDevice,  // device index out of range
  InvalidValue,   // bad argument (null pointer, unknown handle, size overflow)
  NotReady,       // stream/event query: work still pending
  LaunchFailure,  // a kernel or copy failed while running (sticky, like CUDA)
  NotSupported,   // the driver cannot do this
  // Graph capture (CUDA's cudaErrorStreamCapture*):
  CaptureUnsupported,  // not permitted on a capturing stream; it invalidates the capture
  CaptureInvalidated,  // ending a capture that an earlier error invalidated
  CaptureUnjoined,     // ending a capture with a stream that joined it and never rejoined
  Unknown,
};

const char* errorString(Error e);

enum class MemcpyKind : int { HostToHost, HostToDevice, DeviceToHost, DeviceToDevice };

// Opaque handles. A Stream is never null once created; the default stream of a device is
// returned by Driver::defaultStream and must not be destroyed.
struct StreamImpl;
struct EventImpl;
struct GraphExecImpl;
using Stream = StreamImpl*;
using Event = EventImpl*;
using GraphExec = GraphExecImpl*;  // an executable graph, made by streamEndCapture

struct DeviceProperties {
  std::string name;
  size_t total_memory = 0;
  int multi_processor_count = 0;
  int major = 0;
  int minor = 0;
  int warp_size = 1;
  int max_threads_per_block = 1;
  // Occupancy limits (Inductor's Triton heuristics size reductions and fusions with them).
  int max_threads_per_multi_processor = 1;
  int regs_per_multiprocessor = 0;
};

enum EventFlags : unsigned { kEventDefault = 0, kEventDisableTiming = 1 };

// Stream priority: 0 is normal, negative is higher (CUDA's convention).
constexpr int kLowestPriority = 0;
constexpr int kHighestPriority = -1;

using HostFn = void (*)(void* user_data);

// How strictly a capture forbids operations that would make the host wait for the device
// (CUDA's cudaStreamCaptureMode, same values). The host driver refuses them on capturing
// streams in every mode; the torch layer applies the mode to its own synchronising ops.
enum class CaptureMode : int { Global = 0, ThreadLocal = 1, Relaxed = 2 };
// Names a driver allocation for another process (interprocess sharing, as cudaIpcMemHandle).
struct IpcMemHandle {
  int fd = -1;          // host driver: the allocation's memfd (the driver's; the receiver maps it)
  size_t size = 0;      // the allocation's size in bytes (the host driver maps that much)
  uint64_t id = 0;      // the same for every handle of one allocation, in every process
  char bytes[64] = {};  // CUDA driver: the cudaIpcMemHandle_t
};

// While alive, host code may read and write device memory in place (see Driver::hostAccess).
class HostAccessScope {
 public:
  virtual ~HostAccessScope() = default;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char* name() const = 0;  // "host" or "cuda"

  // Devices.
  virtual int deviceCount() = 0;
  virtual Error getDeviceProperties(int device, DeviceProperties* props) = 0;
  virtual Error deviceSynchronize(int device) = 0;

  // Device memory. Pointers are at least 512-byte aligned.
  virtual Error malloc(int device, void** ptr, size_t size) = 0;
  virtual Error free(int device, void* ptr) = 0;
  virtual Error memGetInfo(int device, size_t* free_bytes, size_t* total_bytes) = 0;
  // Which device owns ptr; -1 when it is not device memory of this driver.
  virtual int pointerDevice(const void* ptr) = 0;

  // Page-locked host memory, usable by asynchronous copies.
  virtual Error mallocHost(void** ptr, size_t size) = 0;
  virtual Error freeHost(void* ptr) = 0;

  // Copies and memset, ordered on `stream`. The synchronous memcpy waits for `stream`.
  virtual Error memcpyAsync(void* dst, const void* src, size_t bytes, MemcpyKind kind,
                            Stream stream) = 0;
  virtual Error memsetAsync(void* dst, int value, size_t bytes, Stream stream) = 0;

  // Streams.
  virtual Stream defaultStream(int device) = 0;
  virtual Error streamCreate(int device, Stream* stream, int priority) = 0;
  virtual Error streamDestroy(Stream stream) = 0;
  virtual Error streamSynchronize(Stream stream) = 0;
  virtual Error streamQuery(Stream stream) = 0;  // Success when idle, NotReady otherwise
  virtual Error streamWaitEvent(Stream stream, Event event) = 0;
  virtual int streamDevice(Stream stream) = 0;
  virtual int streamPriority(Stream stream) = 0;
  // Runs fn(user_data) on the stream, in order with the stream's other work.
  virtual Error launchHostFunc(Stream stream, HostFn fn, void* user_data) = 0;
  // Runs `task` on the stream as a kernel of host code (a torch.compile C++ kernel on the
  // host driver): in order with the stream's other work, with device access held; the stream
  // owns it, and a capture keeps it for every replay. What it throws becomes the stream's
  // error. NotSupported where device memory is not host memory (CUDA).
  virtual Error launchHostTask(Stream stream, std::function<void()> task) {
    return Error::NotSupported;
  }
  // The native handle a kernel build launches on (the host Stream itself, or cudaStream_t).
  virtual void* nativeStream(Stream stream) = 0;
  // The Stream for a native handle made elsewhere (torch.accel.ExternalStream): one of the
  // host driver's streams, or a cudaStream_t of `device`. It does not own the handle and
  // stays valid while the handle does. InvalidValue for a handle the driver does not know.
  virtual Error streamFromNative(int device, void* native, Stream* stream) {
    return Error::NotSupported;
  }

  // Interprocess sharing. ipcGetMemHandle names the allocation that starts at `base` (a
  // pointer malloc returned); another process's ipcOpenMemHandle maps it on `device` and
  // returns its own pointer to it, which ipcCloseMemHandle unmaps. NotSupported when the
  // allocation cannot be shared.
  virtual Error ipcGetMemHandle(void* base, IpcMemHandle* handle) { return Error::NotSupported; }
  virtual Error ipcOpenMemHandle(int device, const IpcMemHandle& handle, void** ptr) {
    return Error::NotSupported;
  }
  virtual Error ipcCloseMemHandle(void* ptr) { return Error::NotSupported; }

  // Percent of about the last second during which the device was running work.
  virtual Error deviceUtilization(int device, int* percent) { return Error::NotSupported; }

  // Whether `device` can read and write `peer`'s memory directly.
  virtual Error deviceCanAccessPeer(int device, int peer, bool* can_access) {
    return Error::NotSupported;
  }

  // Graph capture, as CUDA stream capture. Between begin and end, the work queued on `stream`
  // is recorded instead of run, and so is the work of every stream that joins the capture by
  // waiting on an event recorded in it (it must rejoin `stream` the same way before the end).
  // A default stream cannot capture; a stream captures one graph at a time.
  virtual Error streamBeginCapture(Stream stream, CaptureMode mode) = 0;
  // Ends the capture begun on `stream` and instantiates what it recorded. On an error the
  // recording is discarded; either way every stream of the capture stops capturing.
  virtual Error streamEndCapture(Stream stream, GraphExec* graph) = 0;
  // The id of the capture `stream` takes part in (unique in the process), 0 when none.
  virtual uint64_t streamCaptureId(Stream stream) = 0;
  // Queues the whole graph on `stream` as one unit of work, in order with its other work.
  virtual Error graphLaunch(GraphExec graph, Stream stream) = 0;
  // Destroys the graph once launches of it still queued have run.
  virtual Error graphDestroy(GraphExec graph) = 0;
  // Writes a description of the graph's nodes to `path` (Graphviz dot).
  virtual Error graphDebugDump(GraphExec graph, const char* path) = 0;

  // Events.
  virtual Error eventCreate(int device, Event* event, unsigned flags) = 0;
  virtual Error eventDestroy(Event event) = 0;
  virtual Error eventRecord(Event event, Stream stream) = 0;
  virtual Error eventQuery(Event event) = 0;  // Success when completed (or never recorded)
  virtual Error eventSynchronize(Event event) = 0;
  virtual Error eventElapsedTime(float* ms, Event start, Event end) = 0;

  // Host code that computes on device memory in place (the host driver's Inductor kernels)
  // holds the returned scope meanwhile: under TORCH_ACCEL_PROTECT=1 the host driver keeps its
  // memory inaccessible otherwise. Null when device memory is not host memory (CUDA).
  virtual std::unique_ptr<HostAccessScope> hostAccess() = 0;

  // The record kernels on `device` write an input error into (device-accessible memory, see
  // device_error.h); the driver turns it into the failure of the next synchronisation.
  virtual DeviceErrorRecord* deviceErrorRecord(int device) = 0;
  // How many work items (kernels, copies, memsets) the calling thread has queued so far, on
  // any stream: profilers tell the operations that launched work from those that did not.
  // False from a driver that does not count.
  virtual bool threadWorkCount(uint64_t* count) { return false; }
  // How many items (kernels, copies, memsets, event records and waits, host functions, graph
  // launches) have been queued on `stream` so far, by any thread: a count that has not changed
  // means nothing was queued meanwhile. False from a driver that does not count (CUDA).
  virtual bool streamWorkCount(Stream stream, uint64_t* count) { return false; }

  // Takes and clears the sticky error of work that failed asynchronously on `device`.
  virtual Error getLastError(int device) = 0;
  // A message for the last failure, when the driver has more to say than errorString.
  virtual std::string lastErrorMessage(int device) = 0;
};

// The driver chosen by TORCH_ACCEL_DRIVER (host|cuda|auto; default auto). Never null.
// Throws std::runtime_error when `cuda` is requested but unavailable.
Driver& driver();

// Whether the CUDA plugin library was built and installed, and, when loaded, why it is not
// usable (empty when it is usable).
bool cudaPluginBuilt();
std::string cudaPluginStatus();
// A symbol from the loaded CUDA plugin, or nullptr (used by the kernel layer for its table).
void* cudaPluginSymbol(const char* name);

// True in a child process forked after the runtime started: its worker threads (and any GPU
// context) did not survive the fork, so the runtime must not be used there. The torch layer
// turns this into torch's bad-fork error.
bool inBadFork();

}  // namespace accel::rt
