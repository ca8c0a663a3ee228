// How the kernel layer launches host kernels: asynchronously, in order on a stream of the
// host driver (the handle nativeStream() returns, or the Stream itself).
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

#include "runtime/driver.h"

namespace accel::rt::host {

// Queues `work` on `stream`. An exception thrown by `work` becomes the device's sticky
// LaunchFailure, reported by the next synchronize. Under TORCH_ACCEL_LAUNCH_BLOCKING=1 the
// work runs on the caller, after the stream drains, and a failure is also returned here.
// While the stream captures a graph, the work is recorded instead (see capture.h).
Error enqueue(Stream stream, std::function<void()> work);

namespace detail {
// Runs fn(context) on the caller if the stream is idle (see StreamImpl::runInlineIfIdle);
// true when it did, or when the launch failed before running (then *result says why).
bool runIfIdle(Stream stream, void (*fn)(void*), void* context, Error* result);
// enqueue, past the checks runIfIdle already made.
Error queue(Stream stream, std::function<void()> work);
}  // namespace detail

// enqueue, for work known to take about as long as waking a stream worker (a kernel over a
// few thousand elements, a small copy): when nothing is queued or running on the stream, it
// runs on the caller at once, which is what the queue would have done, minus the wake-up.
template <class F>
Error enqueueShort(Stream stream, F&& work) {
  Error result = Error::Success;
  if (detail::runIfIdle(
          stream, [](void* w) { (*static_cast<std::remove_reference_t<F>*>(w))(); }, &work,
          &result)) {
    return result;
  }
  return detail::queue(stream, std::function<void()>(std::forward<F>(work)));
}

}  // namespace accel::rt::host
