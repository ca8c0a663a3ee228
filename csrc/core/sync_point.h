// The one hook every operation that makes the host wait for an accel device calls first:
// .item(), copies to or from pageable host memory, nonzero, the CPU fallback, stream, event
// and device synchronize, and host-run compiled kernels. Listeners decide what such a point
// means: graph capture turns it into an error (core/graph.cpp); the sync debug mode warns or
// raises (core/sync_debug_mode.cpp).
#pragma once

namespace accel {

// What kind of wait a sync point is. torch.cuda's sync debug mode flags the implicit ones and
// not a synchronize the user asked for; a capture refuses both.
enum class SyncKind { Implicit, DeviceSynchronize };

// Called with the name of the synchronising op (an aten name, or an API like
// "torch.accel.synchronize()"); may throw, and the throw then reaches the caller.
using SyncListener = void (*)(const char* op, SyncKind kind);

// Registers a listener for the rest of the process (at load time; at most a few).
void addSyncListener(SyncListener listener);

// Tells every listener that `op` is about to wait for the device.
void hostSyncPoint(const char* op, SyncKind kind = SyncKind::Implicit);

// For an operation built of other synchronising ones (the CPU fallback's copies): reports `op`
// once, and the points reached inside the scope, on this thread, stay silent.
class SyncPointScope {
 public:
  explicit SyncPointScope(const char* op);
  ~SyncPointScope();
  SyncPointScope(const SyncPointScope&) = delete;
  SyncPointScope& operator=(const SyncPointScope&) = delete;
};

}  // namespace accel
