// NCCL's ordering between the caller's stream and a group's communication stream: a
// collective starts after the work queued on the caller's stream, and work.wait() makes the
// caller's stream wait for it. On the host driver each such cross-stream wait costs thread
// hand-offs: back-to-back collectives with waits between them ping-pong, the caller's stream
// waking to pass the next collective's start marker and the communication stream waking on it.
// So a collective skips the wait when the caller's stream has had nothing queued since it
// waited for the same communication stream (Driver::streamWorkCount): everything with an
// effect on it is then older than a start marker the communication stream already waited for,
// and what came after is a wait for the communication stream's own past. Where the driver does
// not count (CUDA), every collective waits.
#pragma once

#include <cstdint>
#include <mutex>

#include "runtime/driver.h"

namespace accel::dist {

class StreamOrder {
 public:
  // Makes `comm` wait for everything queued on `caller` so far, unless it already does.
  void follow(rt::Stream comm, rt::Stream caller, int device);
  // Makes `caller` wait for `event`, recorded on `comm`.
  void await(rt::Stream caller, rt::Stream comm, rt::Event event, int device);

 private:
  std::mutex mu_;
  // `comm`'s queue is ordered after the first `covered` items of `caller`.
  rt::Stream caller_ = nullptr;
  rt::Stream comm_ = nullptr;
  uint64_t covered_ = 0;
};

}  // namespace accel::dist
