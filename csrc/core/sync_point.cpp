#include "core/sync_point.h"

#include <c10/util/Exception.h>

#include <atomic>

namespace accel {
namespace {

std::atomic<int> g_debug_mode{0};
thread_local int t_quiet = 0;  // depth of SyncPointScopes on this thread

}  // namespace

void hostSyncPoint(const char* op) {
  const int mode = g_debug_mode.load(std::memory_order_relaxed);
  if (C10_LIKELY(mode == 0) || t_quiet > 0) return;
  TORCH_CHECK(mode != 2, "called a synchronizing accel operation: ", op,
              " (torch.accel.set_sync_debug_mode(\"error\") is on)");
  TORCH_WARN("called a synchronizing accel operation: ", op);
}

SyncPointScope::SyncPointScope(const char* op) {
  hostSyncPoint(op);
  ++t_quiet;
}

SyncPointScope::~SyncPointScope() { --t_quiet; }

void setSyncDebugMode(int mode) {
  TORCH_CHECK(mode >= 0 && mode <= 2, "sync debug mode must be 0, 1 or 2, got ", mode);
  g_debug_mode.store(mode, std::memory_order_relaxed);
}

int syncDebugMode() { return g_debug_mode.load(std::memory_order_relaxed); }

}  // namespace accel
