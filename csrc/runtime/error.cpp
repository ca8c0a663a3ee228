#include "runtime/driver.h"

namespace accel::rt {

const char* errorString(Error e) {
  switch (e) {
    case Error::Success: return "no error";
    case Error::OutOfMemory: return "out of memory";
    case Error::InvalidDevice: return "invalid device ordinal";
    case Error::InvalidValue: return "invalid argument";
    case Error::NotReady: return "device not ready";
    case Error::LaunchFailure: return "unspecified launch failure";
    case Error::NotSupported: return "operation not supported";
    case Error::CaptureUnsupported: return "operation not permitted when stream is capturing";
    case Error::CaptureInvalidated:
      return "operation failed due to a previous error during capture";
    case Error::CaptureUnjoined:
      return "capture contains a stream that did not rejoin the capturing stream";
    case Error::Unknown: break;
  }
  return "unknown error";
}

}  // namespace accel::rt
