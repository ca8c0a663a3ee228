// Graph capture on the host driver. While a stream captures, the work queued on it (kernel
// closures with their descriptors, copies, event markers, host functions) is appended to a
// Capture instead of its queue; ending the capture turns the recording into a GraphExecImpl,
// which a launch queues on a stream as one item that runs the recording in order.
//
// The recording is one sequence in queuing order, across every stream of the capture. Work
// of different streams is queued from host code in an order that already satisfies their
// event dependencies, so running the sequence in order honours all of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/driver.h"

namespace accel::rt::host {

using Work = std::function<void()>;

class Capture;

// Where an event was recorded inside a capture: the stream, and how much work that stream had
// recorded then. A stream waiting on it is ordered after that work.
struct CaptureMark {
  std::weak_ptr<Capture> capture;
  Stream stream = nullptr;
  uint64_t recorded = 0;
};

class Capture : public std::enable_shared_from_this<Capture> {
 public:
  Capture(CaptureMode mode, Stream origin);
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  const uint64_t id;  // unique in the process, never 0
  const CaptureMode mode;
  const Stream origin;

  // Appends work queued on `stream`, a stream of this capture. CaptureInvalidated once the
  // capture is invalid (the work is dropped, as CUDA drops it).
  Error record(Stream stream, Work work);
  // An event recorded on `stream` now.
  CaptureMark mark(Stream stream);
  // `waiter` waits on an event marked by `mark`: it is ordered after the marked work, and
  // joins the capture if it was not part of it. False when the capture has ended.
  bool join(Stream waiter, const CaptureMark& mark);
  // The first error wins; later work is dropped.
  void invalidate(Error why);
  bool ended();
  // Ends the capture: its status (Success, the invalidating error, or CaptureUnjoined), the
  // recording and every stream that took part. Later calls return InvalidValue.
  Error finish(std::vector<Work>* work, std::vector<Stream>* streams);

 private:
  struct Member {
    Stream stream;
    uint64_t recorded = 0;  // work items it appended
    bool pending = false;   // has work (or joined) not yet ordered before another member
  };
  Member& member(Stream stream);  // mu_ held; adds the stream when new

  std::mutex mu_;
  std::vector<Member> members_;
  std::vector<Work> work_;
  Error status_ = Error::Success;
  bool ended_ = false;
};

}  // namespace accel::rt::host

namespace accel::rt {

// What rt::GraphExec points to on the host driver. The recording is shared with the launches
// still queued, so destroying the graph never waits.
struct GraphExecImpl {
  std::shared_ptr<const std::vector<host::Work>> work;
  int device = 0;
};

}  // namespace accel::rt
