// The host driver: simulated devices whose memory is host RAM with a fixed capacity, whose
// streams are worker threads and whose events are real.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/driver.h"

namespace accel::rt::host {

struct HostConfig {
  int devices = 2;                    // TORCH_ACCEL_HOST_DEVICES
  size_t capacity = size_t{1} << 30;  // bytes per device; TORCH_ACCEL_HOST_MEMORY ("512M")
  bool protect = false;               // TORCH_ACCEL_PROTECT=1, see device_access.h
  bool launch_blocking = false;       // TORCH_ACCEL_LAUNCH_BLOCKING=1
};

// The configuration the environment asks for. The default capacity is min(8 GiB, RAM / 4).
// Throws std::runtime_error on a malformed value.
HostConfig hostConfigFromEnv();

// A new, independent host driver (tests make their own; driver() makes the process's one).
// Destroying it finishes the work still queued, then frees its memory.
std::unique_ptr<Driver> makeHostDriver(const HostConfig& config);

}  // namespace accel::rt::host
