#include "runtime/host/busy_clock.h"

#include <algorithm>
#include <array>

namespace accel::rt::host {

void BusyClock::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_++ == 0) busy_since_ = Clock::now();
}

void BusyClock::end() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--running_ == 0) busy_ += Clock::now() - busy_since_;
}

BusyClock::Clock::duration BusyClock::busyUntil(Clock::time_point now) const {
  return running_ > 0 ? busy_ + (now - busy_since_) : busy_;
}

int BusyClock::utilization(Clock::duration window) {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = Clock::now();
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
