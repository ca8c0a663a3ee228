#include "core/device.h"

#include <c10/util/Exception.h>

#include "core/rt_check.h"

namespace accel {

namespace {
// Like cudaSetDevice, the current device belongs to the calling thread.
thread_local c10::DeviceIndex t_current_device = 0;
}  // namespace

// Device errors are torch.AcceleratorError (a RuntimeError), as CUDA's are; the code is the
// runtime's error number.
[[noreturn]] void throwAcceleratorError(rt::Error err, const std::string& msg) {
  throw c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                              static_cast<int32_t>(err), msg);
}

void throwRuntimeError(rt::Error err, const char* expr, int device) {
  std::string detail = device >= 0 ? rt::driver().lastErrorMessage(device) : std::string();
  // Reported once: the failure is taken off the device, so the next op runs (a kernel's input
  // error leaves the device usable; a CUDA fault that poisons the context keeps failing).
  if (err == rt::Error::LaunchFailure && device >= 0) rt::driver().getLastError(device);
  if (err == rt::Error::OutOfMemory) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "accel:", device, " out of memory in ", expr,
                     detail.empty() ? "" : ": ", detail);
  }
  throwAcceleratorError(
      err, c10::str("accel runtime error '", rt::errorString(err), "' in ", expr,
                    device >= 0 ? " on accel:" + std::to_string(device) : std::string(),
                    detail.empty() ? "" : ": ", detail));
}

c10::DeviceIndex deviceCount() {
  static const c10::DeviceIndex count = static_cast<c10::DeviceIndex>(rt::driver().deviceCount());
  return count;
}

c10::DeviceIndex currentDevice() { return t_current_device; }

void setCurrentDevice(c10::DeviceIndex index) { t_current_device = resolveDevice(index); }

void checkDeviceIndex(c10::DeviceIndex index) {
  if (C10_LIKELY(index >= 0 && index < deviceCount())) return;
  throwAcceleratorError(
      rt::Error::InvalidDevice,
      c10::str("Invalid device index accel:", static_cast<int>(index), ": this process has ",
               static_cast<int>(deviceCount()), " accel device(s) (driver '", rt::driver().name(),
               "'); valid indices are 0 to ", static_cast<int>(deviceCount()) - 1, "."));
}

c10::DeviceIndex resolveDevice(c10::DeviceIndex index) {
  if (index == -1) return t_current_device;
  checkDeviceIndex(index);
  return index;
}

void checkNotForked() {
  TORCH_CHECK(!rt::inBadFork(),
              "Cannot re-initialize accel in forked subprocess. To use accel with "
              "multiprocessing, you must use the 'spawn' start method");
}

}  // namespace accel
