// The one hook every operation that makes the host wait for an accel device calls first:
// .item(), copies to or from pageable host memory, nonzero, the CPU fallback, stream, event
// and device synchronize, and host-run compiled kernels. Listeners decide what such a point
// means: graph capture turns it into an error (core/graph.cpp); a sync debug mode can warn.
#pragma once

namespace accel {

// Called with the name of the synchronising op (an aten name, or an API like
// "torch.accel.synchronize()"); may throw, and the throw then reaches the caller.
using SyncListener = void (*)(const char* op);

// Registers a listener for the rest of the process (at load time; at most a few).
void addSyncListener(SyncListener listener);

// Tells every listener that `op` is about to wait for the device.
void hostSyncPoint(const char* op);

}  // namespace accel
