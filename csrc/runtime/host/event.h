// A host event: a marker queued on a stream that records when the stream reached it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runtime/driver.h"
#include "runtime/host/capture.h"

namespace accel::rt {

struct EventImpl {
  EventImpl(int device, unsigned flags) : device(device), flags(flags) {}

  // Queues the marker on `stream`; a new record replaces the previous one. On a capturing
  // stream the record marks a point of the capture instead (see makeStreamWait); the event's
  // own state is left as it was, as the capture never runs.
  Error record(Stream stream);
  // Success when the last record completed (or there was none), NotReady otherwise.
  Error query() const;
  void wait() const;
  // Queues, on `stream`, a wait for the record current at this call. When that record is a
  // point of a capture, `stream` is ordered after it in the capture instead, joining the
  // capture if needed. A capturing stream cannot wait on work outside its capture that has
  // not completed (CaptureUnsupported, and the capture is invalidated).
  Error makeStreamWait(Stream stream) const;
  // Success with the time between two completed records; NotReady or InvalidValue otherwise.
  static Error elapsed(float* ms, const EventImpl& start, const EventImpl& end);

  const int device;
  const unsigned flags;

 private:
  // When the last record completed; InvalidValue if never recorded, NotReady if pending.
  Error completionTime(std::chrono::steady_clock::time_point* time) const;

  // Shared with the queued markers and waits, so the event may be destroyed while they pend.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    uint64_t recorded = 0;   // generation of the last record
    uint64_t completed = 0;  // highest generation whose marker ran
    std::chrono::steady_clock::time_point time;
    host::CaptureMark captured;  // set when the last record was made in a capture
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();

  // Marks generation `generation` of `state` reached, now.
  static void complete(const std::shared_ptr<State>& state, uint64_t generation);
};

}  // namespace accel::rt
