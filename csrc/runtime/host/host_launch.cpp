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

}  // namespace accel::rt::host
