#include "runtime/host/spin_wait.h"

#include <cstdlib>

namespace accel::rt::host {

std::chrono::nanoseconds spinBudget() {
  static const std::chrono::nanoseconds budget = [] {
    const char* v = std::getenv("TORCH_ACCEL_SPIN_US");
    const long us = v != nullptr && *v != '\0' ? std::strtol(v, nullptr, 10) : 50;
    return std::chrono::microseconds(us > 0 ? us : 0);
  }();
  return budget;
}

}  // namespace accel::rt::host
