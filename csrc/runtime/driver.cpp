#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runtime/cuda_plugin.h"
#include "runtime/driver.h"
#include "runtime/host/host_driver.h"

namespace accel::rt {
namespace {

Driver* selectDriver() {
  const char* env = std::getenv("TORCH_ACCEL_DRIVER");
  const std::string choice = env != nullptr && *env != '\0' ? env : "auto";
  if (choice == "host") return host::makeHostDriver(host::hostConfigFromEnv()).release();
  if (choice == "cuda") {
    if (Driver* d = cudaPluginDriver()) return d;
    throw std::runtime_error("TORCH_ACCEL_DRIVER=cuda, but the CUDA driver is unavailable: " +
                             cudaPluginStatus());
  }
  if (choice == "auto") {
    if (Driver* d = cudaPluginDriver()) return d;
    return host::makeHostDriver(host::hostConfigFromEnv()).release();
  }
  throw std::runtime_error("TORCH_ACCEL_DRIVER must be host, cuda or auto, not '" + choice + "'");
}

}  // namespace

Driver& driver() {
  // Never destroyed: stream workers may still be parked when the process exits, and tearing
  // the driver down during static destruction would race them (or run after its users died).
  static Driver* const d = selectDriver();
  return *d;
}

}  // namespace accel::rt
