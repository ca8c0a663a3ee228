// The one hook every host-synchronising operation calls before it makes the host wait for the
// device (.item(), blocking device-to-host copies, nonzero, the CPU fallback, stream
// synchronize), so that modes which must see every such point see them all: the sync debug
// mode (torch.accel.set_sync_debug_mode) warns or raises here.
#pragma once

namespace accel {

// `op` names the operation, for the warning or error.
void hostSyncPoint(const char* op);

// For an operation built of other synchronising ones (the CPU fallback's copies): reports `op`
// once, and the points reached inside the scope, on this thread, stay silent.
class SyncPointScope {
 public:
  explicit SyncPointScope(const char* op);
  ~SyncPointScope();
  SyncPointScope(const SyncPointScope&) = delete;
  SyncPointScope& operator=(const SyncPointScope&) = delete;
};

// Sync debug mode, as torch.cuda's: 0 off, 1 warn, 2 error.
void setSyncDebugMode(int mode);
int syncDebugMode();

}  // namespace accel
