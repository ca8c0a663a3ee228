#include "distributed/stream_order.h"

#include "core/rt_check.h"

namespace accel::dist {

void StreamOrder::follow(rt::Stream comm, rt::Stream caller, int device) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t before = 0;
  const bool counted = rt::driver().streamWorkCount(caller, &before);
  if (counted && caller == caller_ && comm == comm_ && before == covered_) return;
  rt::Event ready = nullptr;
  ACCEL_RT_CHECK(rt::driver().eventCreate(device, &ready, rt::kEventDisableTiming), device);
  rt::Error err = rt::driver().eventRecord(ready, caller);
  if (err == rt::Error::Success) err = rt::driver().streamWaitEvent(comm, ready);
  rt::driver().eventDestroy(ready);
  ACCEL_RT_CHECK(err, device);
  // Covered up to the marker, when it is the one item queued meanwhile.
  uint64_t after = 0;
  const bool alone = counted && rt::driver().streamWorkCount(caller, &after) && after == before + 1;
  caller_ = alone ? caller : nullptr;
  comm_ = comm;
  covered_ = after;
}

void StreamOrder::await(rt::Stream caller, rt::Stream comm, rt::Event event, int device) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t before = 0, after = 0;
  const bool counted = rt::driver().streamWorkCount(caller, &before);
  ACCEL_RT_CHECK(rt::driver().streamWaitEvent(caller, event), device);
  if (!counted || caller != caller_ || comm != comm_ || before != covered_ ||
      !rt::driver().streamWorkCount(caller, &after)) {
    return;
  }
  // Still covered when nothing was queued, or the one item queued is this wait: certain when the
  // event is still pending now, since the driver queues no wait for a completed event.
  const bool pending = rt::driver().eventQuery(event) == rt::Error::NotReady;
  if (after == before || (pending && after == before + 1)) covered_ = after;
}

}  // namespace accel::dist
