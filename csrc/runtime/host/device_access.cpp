#include "runtime/host/device_access.h"

#include <sys/mman.h>

#include <map>
#include <mutex>

namespace accel::rt::host {
namespace detail {
std::atomic<bool> protect_in_use{false};
}  // namespace detail

namespace {

struct Registry {
  std::mutex mu;
  int holders = 0;                  // live DeviceAccess objects that counted
  std::map<void*, size_t> regions;  // base -> length
};

// Leaked so that workers still running at exit never see it destroyed.
Registry& registry() {
  static Registry* const r = new Registry;
  return *r;
}

void protect(void* base, size_t length, bool accessible) {
  mprotect(base, length, accessible ? PROT_READ | PROT_WRITE : PROT_NONE);
}

}  // namespace

bool detail::acquireAccess() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.holders++ == 0) {
    for (const auto& [base, length] : r.regions) protect(base, length, true);
  }
  return true;
}

void detail::releaseAccess() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (--r.holders == 0) {
    for (const auto& [base, length] : r.regions) protect(base, length, false);
  }
}

void registerProtected(void* base, size_t length) {
  detail::protect_in_use.store(true, std::memory_order_relaxed);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.regions.emplace(base, length);
  protect(base, length, r.holders > 0);
}

void unregisterProtected(void* base) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.regions.erase(base);
}

}  // namespace accel::rt::host
