#include "runtime/fork.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

#include "runtime/driver.h"

namespace accel::rt {
namespace {
std::atomic<bool> forked{false};
void onForkChild() { forked.store(true, std::memory_order_relaxed); }
}  // namespace

void watchForFork() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, onForkChild); });
}

bool inBadFork() { return forked.load(std::memory_order_relaxed); }

}  // namespace accel::rt
