// The one rule for the result of every CUDA call, free of CUDA headers so that
// tests/cpp/runtime_cuda_error_test.cpp runs it against a fake CUDA runtime on any machine.
//   success       the thread's message is emptied: a later failure never shows an older one.
//   not ready     a query with work pending is an answer, not a failure. CUDA still leaves
//                 the code in its per-thread last-error slot, so it is taken off there: the
//                 next launch check (ours or torch.cuda's) would report it as its own failure.
//   other errors  the message "call: CUDA's text" is kept for the PyTorch error, and the code
//                 is taken off the last-error slot: a non-sticky error is reported once, by the
//                 call that failed (a sticky one fails every later call anyway).
// A kernel launch reports only through the last-error slot: settleLaunch reads it.
#pragma once

#include <string>

#include "runtime/driver.h"

namespace accel::rt::cuda {

// Api provides: Code, kSuccess, kNotReady, Error translate(Code), const char* describe(Code),
// Code takeLastError() (cudaGetLastError: returns the slot and resets it unless sticky).
template <class Api>
Error settle(typename Api::Code code, const char* call, std::string& message) {
  if (code == Api::kSuccess) {
    message.clear();
    return Error::Success;
  }
  (void)Api::takeLastError();
  if (code == Api::kNotReady) {
    message.clear();
    return Error::NotReady;
  }
  message.assign(call).append(": ").append(Api::describe(code));
  return Api::translate(code);
}

// A call whose failure is an answer (a foreign pointer, a stream not capturing), or a cleanup
// whose outcome does not matter: the code is taken off the last-error slot, and the message
// is left alone (it still explains the call that failed before the cleanup).
template <class Api>
bool settleProbe(typename Api::Code code) {
  if (code == Api::kSuccess) return true;
  (void)Api::takeLastError();
  return false;
}

template <class Api>
Error settleLaunch(const char* kernel, std::string& message) {
  return settle<Api>(Api::takeLastError(), kernel, message);
}

}  // namespace accel::rt::cuda
