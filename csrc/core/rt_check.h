// Turns a failed runtime call into a PyTorch error that names the call and the device.
#pragma once

#include <c10/util/Exception.h>

#include "runtime/driver.h"

namespace accel {

[[noreturn]] void throwRuntimeError(rt::Error err, const char* expr, int device);

}  // namespace accel

#define ACCEL_RT_CHECK(expr, device)                               \
  do {                                                             \
    ::accel::rt::Error accel_err_ = (expr);                        \
    if (C10_UNLIKELY(accel_err_ != ::accel::rt::Error::Success)) { \
      ::accel::throwRuntimeError(accel_err_, #expr, (device));     \
    }                                                              \
  } while (0)
