#include "runtime/host/host_launch.h"

#include "runtime/host/fault.h"
#include "runtime/host/stream.h"
#include "runtime/host/work_count.h"

namespace accel::rt::host {

Error enqueue(Stream stream, std::function<void()> work) {
  if (stream == nullptr || !work) return Error::InvalidValue;
  if (processFaults().inject(FaultSite::Launch)) return Error::LaunchFailure;
  noteWorkQueued();
  return stream->enqueue(std::move(work));
}

namespace detail {

bool runIfIdle(Stream stream, void (*fn)(void*), void* context, Error* result) {
  if (stream == nullptr) {
    *result = Error::InvalidValue;
    return true;
  }
  if (processFaults().inject(FaultSite::Launch)) {
    *result = Error::LaunchFailure;
    return true;
  }
  *result = Error::Success;
  noteWorkQueued();  // inline or queued (detail::queue), it is one work item
  return stream->runInlineIfIdle(fn, context);
}

Error queue(Stream stream, std::function<void()> work) { return stream->enqueue(std::move(work)); }

}  // namespace detail
}  // namespace accel::rt::host
