// How busy a simulated device is: torch.accel.utilization() on the host driver is the share of
// time during which at least one of the device's stream workers was running work.
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <utility>

namespace accel::rt::host {

class BusyClock {
 public:
  using Clock = std::chrono::steady_clock;

  void begin();  // a worker starts an item
  void end();    // and finishes it
  // Percent busy over about the last `window`: since the newest earlier query at least that
  // old, else the oldest one, else since the clock started.
  int utilization(Clock::duration window);

 private:
  Clock::duration busyUntil(Clock::time_point now) const;  // mu_ held

  std::mutex mu_;
  int running_ = 0;
  Clock::time_point started_ = Clock::now();
  Clock::time_point busy_since_;
  Clock::duration busy_{0};                                            // completed busy time
  std::deque<std::pair<Clock::time_point, Clock::duration>> samples_;  // earlier queries
};

// The clock of simulated device `device` (shared by every host driver in the process).
BusyClock& busyClock(int device);

// Marks the calling worker busy on `device` for its lifetime.
class BusyScope {
 public:
  explicit BusyScope(int device) : clock_(busyClock(device)) { clock_.begin(); }
  ~BusyScope() { clock_.end(); }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;

 private:
  BusyClock& clock_;
};

}  // namespace accel::rt::host
