// Protect mode (TORCH_ACCEL_PROTECT=1): simulated device memory is PROT_NONE whenever no
// driver operation is using it, so host code that dereferences a device pointer dies with
// SIGSEGV, the way it would fault on a GPU. A DeviceAccess marks "a driver operation is
// using device memory now": while at least one is alive anywhere in the process, every
// protected allocation is readable and writable.
//
// Stream workers hold one while they run each item; the CPU fallback holds one while it
// copies. Without protect mode a DeviceAccess costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstddef>

namespace accel::rt::host {

namespace detail {
extern std::atomic<bool> protect_in_use;  // set once a protected allocation ever existed
bool acquireAccess();                     // returns true (so the destructor releases)
void releaseAccess();
}  // namespace detail

class DeviceAccess {
 public:
  DeviceAccess()
      : active_(detail::protect_in_use.load(std::memory_order_relaxed) && detail::acquireAccess()) {
  }
  ~DeviceAccess() {
    if (active_) detail::releaseAccess();
  }
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;

 private:
  const bool active_;
};

// For the memory manager: a page-aligned mapping that protect mode guards. It is made
// accessible or PROT_NONE on registration according to the current DeviceAccess count.
void registerProtected(void* base, size_t length);
void unregisterProtected(void* base);

}  // namespace accel::rt::host
