// A short spin before a thread blocks on a condition variable. On a virtual machine a core
// whose threads all sleep is halted, and a notify must wake it through the hypervisor: tens of
// microseconds, more than a small kernel takes. Kernels come in quick succession in a training
// step, so the host's threads (stream workers, the pool's helpers, a synchronising caller)
// first watch for their condition for a bounded while, as OpenMP's threads do after a
// parallel region, and only then block. TORCH_ACCEL_SPIN_US sets the while (0: block at once).
#pragma once

#include <chrono>
#include <thread>

namespace accel::rt::host {

// The spin budget, read from TORCH_ACCEL_SPIN_US once (default 50 us).
std::chrono::nanoseconds spinBudget();

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls ready() until it holds or the budget is spent, and returns its last value. It yields
// the core now and then, so that on a busy machine a spinner delays no runnable thread long.
template <class Ready>
bool spinUntil(const Ready& ready) {
  const auto budget = spinBudget();
  if (budget.count() == 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return ready();
      std::this_thread::yield();
    } else {
      cpuRelax();
    }
  }
}

}  // namespace accel::rt::host
