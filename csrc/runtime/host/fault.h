// Fault injection for the host driver:
// TORCH_ACCEL_FAULTS="malloc:0.01,memcpy:0.001,launch:0.001,seed:7" makes device mallocs, copies
// and kernel launches fail at those rates, so tests can prove that every failure surfaces as a
// Python exception and leaves the runtime usable.
//
// A faulted malloc returns OutOfMemory (the allocator then retries and may raise
// torch.OutOfMemoryError); a faulted memcpyAsync or launch returns LaunchFailure without
// queueing anything. Draws come from one generator per site, seeded by `seed` (default 0), so
// a single-threaded program sees the same faults on every run.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace accel::rt::host {

enum class FaultSite : int { Malloc, Memcpy, Launch };
constexpr int kFaultSites = 3;

class FaultInjector {
 public:
  FaultInjector() = default;  // injects nothing
  // Parses a TORCH_ACCEL_FAULTS value; throws std::runtime_error naming the bad part.
  explicit FaultInjector(const std::string& spec);

  bool enabled() const { return enabled_; }
  // True when this call at `site` must fail (and counts it).
  bool inject(FaultSite site);
  uint64_t injected(FaultSite site) const;
  // "malloc=3 memcpy=0 launch=1": what was injected so far.
  std::string summary() const;

 private:
  bool enabled_ = false;
  std::array<double, kFaultSites> rate_{};
  mutable std::mutex mu_;
  std::array<std::mt19937_64, kFaultSites> rng_;
  std::array<uint64_t, kFaultSites> count_{};
};

// The process's injector, configured from TORCH_ACCEL_FAULTS on first use (throws on a
// malformed value). When enabled, the injected counts are printed to stderr at exit.
FaultInjector& processFaults();

}  // namespace accel::rt::host
