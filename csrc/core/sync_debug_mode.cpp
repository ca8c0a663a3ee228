#include "core/sync_debug_mode.h"

#include <c10/util/Exception.h>

#include <atomic>

#include "core/sync_point.h"

namespace accel {
namespace {

std::atomic<int> g_mode{0};

void report(const char* op, SyncKind kind) {
  const int mode = g_mode.load(std::memory_order_relaxed);
  if (C10_LIKELY(mode == 0) || kind == SyncKind::DeviceSynchronize) return;
  TORCH_CHECK(mode != 2, "called a synchronizing accel operation: ", op,
              " (torch.accel.set_sync_debug_mode(\"error\") is on)");
  TORCH_WARN("called a synchronizing accel operation: ", op);
}

[[maybe_unused]] const bool g_listening = [] {
  addSyncListener(&report);
  return true;
}();

}  // namespace

void setSyncDebugMode(int mode) {
  TORCH_CHECK(mode >= 0 && mode <= 2, "sync debug mode must be 0, 1 or 2, got ", mode);
  g_mode.store(mode, std::memory_order_relaxed);
}

int syncDebugMode() { return g_mode.load(std::memory_order_relaxed); }

}  // namespace accel
