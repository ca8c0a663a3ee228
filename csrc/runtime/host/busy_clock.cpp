#include "runtime/host/busy_clock.h"

#include <algorithm>
#include <array>
#include <ctime>

namespace accel::rt::host {
namespace {

// Work items are timed with the coarse monotonic clock (a tick of a few ms; a read takes
// ~10 ns where the precise clock's takes ~50 ns on a virtual machine, and every short kernel
// reads it twice). An item shorter than a tick counts a whole tick or nothing, with the chance
// of its share of one, so the busy time stays right on average.
BusyClock::Clock::time_point coarseNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return BusyClock::Clock::time_point(std::chrono::duration_cast<BusyClock::Clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

}  // namespace

void BusyClock::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_++ == 0) busy_since_ = coarseNow();
}

void BusyClock::end() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--running_ == 0) busy_ += coarseNow() - busy_since_;
}

BusyClock::Clock::duration BusyClock::busyUntil(Clock::time_point now) const {
  return running_ > 0 ? busy_ + (now - busy_since_) : busy_;
}

int BusyClock::utilization(Clock::duration window) {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = coarseNow();
  const Clock::duration busy = busyUntil(now);
  // Keep the newest query older than the window as the reference, and the ones after it.
  while (samples_.size() > 1 && now - samples_[1].first >= window) samples_.pop_front();
  const auto [since, busy_then] =
      samples_.empty() ? std::make_pair(started_, Clock::duration{0}) : samples_.front();
  samples_.emplace_back(now, busy);
  const double elapsed = std::chrono::duration<double>(now - since).count();
  if (elapsed <= 0) return 0;
  const double share = std::chrono::duration<double>(busy - busy_then).count() / elapsed;
  return static_cast<int>(std::clamp(share, 0.0, 1.0) * 100.0 + 0.5);
}

BusyClock& busyClock(int device) {
  static std::array<BusyClock, 256> clocks;  // device indices fit in a c10::DeviceIndex
  return clocks[static_cast<size_t>(device) % clocks.size()];
}

}  // namespace accel::rt::host
