// Shared by the runtime gtests: a small host driver built from an explicit config.
#pragma once

#include <memory>

#include "runtime/driver.h"
#include "runtime/host/host_driver.h"

namespace accel::rt::test {

inline std::unique_ptr<Driver> hostDriver(int devices = 2, size_t capacity = 64 << 20,
                                          bool protect = false, bool launch_blocking = false) {
  host::HostConfig c;
  c.devices = devices;
  c.capacity = capacity;
  c.protect = protect;
  c.launch_blocking = launch_blocking;
  return host::makeHostDriver(c);
}

}  // namespace accel::rt::test
