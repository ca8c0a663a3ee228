// The sticky error of one simulated device: set when queued work throws, reported by every
// synchronize until getLastError takes it, as CUDA does with a failed kernel.
#pragma once

#include <mutex>
#include <string>

#include "runtime/driver.h"

namespace accel::rt::host {

class StickyError {
 public:
  // Keeps the first failure: later ones are usually consequences of it.
  void set(std::string message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_) return;
    pending_ = true;
    message_ = std::move(message);
  }
  bool pending() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_;
  }
  // LaunchFailure (and clears it) when an error is pending, Success otherwise.
  Error take() {
    std::lock_guard<std::mutex> lock(mu_);
    const bool was = pending_;
    pending_ = false;
    return was ? Error::LaunchFailure : Error::Success;
  }
  // The message of the last failure; kept after take() so it can still be reported.
  std::string message() const {
    std::lock_guard<std::mutex> lock(mu_);
    return message_;
  }

 private:
  mutable std::mutex mu_;
  bool pending_ = false;
  std::string message_;
};

}  // namespace accel::rt::host
