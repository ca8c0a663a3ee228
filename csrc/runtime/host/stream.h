// A host stream: an in-order queue of work run by the stream's own worker thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "runtime/driver.h"
#include "runtime/host/capture.h"
#include "runtime/host/sticky_error.h"

namespace accel::rt {

struct StreamImpl {
  using Work = host::Work;
  using InlineFn = void (*)(void* context);

  // `error` is the owning device's sticky error; it must outlive the stream.
  StreamImpl(int device, int priority, host::StickyError& error, bool launch_blocking);
  // Runs what is still queued, then stops the worker. Must not be called from the stream's
  // own work.
  ~StreamImpl();
  StreamImpl(const StreamImpl&) = delete;
  StreamImpl& operator=(const StreamImpl&) = delete;

  // Queues `work` (the worker starts on first use), or records it while the stream captures.
  // Under launch blocking, drains the queue and runs `work` on the caller instead, returning
  // LaunchFailure if it throws. Returns NotSupported in a forked child, where the worker does
  // not exist.
  Error enqueue(Work work);
  // Runs fn(context) on the caller when nothing is queued or running and the stream does not
  // capture, and returns true; else returns false and does nothing. For short work, it saves
  // waking the worker; the result is the same as a queued item that ran at once (a throw
  // becomes the sticky error).
  bool runInlineIfIdle(InlineFn fn, void* context);
  // enqueue; short work (see runInlineIfIdle) runs on the caller when the stream is idle.
  template <class F>
  Error submit(F&& work, bool is_short) {
    if (is_short &&
        runInlineIfIdle([](void* w) { (*static_cast<std::remove_reference_t<F>*>(w))(); }, &work)) {
      return Error::Success;
    }
    return enqueue(Work(std::forward<F>(work)));
  }
  // Items queued so far (inline runs included): Driver::streamWorkCount.
  uint64_t queuedCount() const { return queued_.load(); }
  // Waits until every queued item has finished.
  void drain();
  bool idle();

  // The capture this stream takes part in, or null.
  std::shared_ptr<host::Capture> capture();
  // Makes the stream record into `capture`; false when it already takes part in another one.
  bool joinCapture(const std::shared_ptr<host::Capture>& capture);
  // Stops recording into `capture` (nothing if the stream records into another one).
  void leaveCapture(const host::Capture* capture);

  const int device;
  const int priority;

 private:
  void workerLoop();
  // After any change of queue_, running_ or stop_, under mu_: updates what spinners watch.
  void changed();
  // False when the work threw (the sticky error is then set).
  bool run(InlineFn fn, void* context);
  bool run(Work& work);

  host::StickyError& error_;
  const bool launch_blocking_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for work (and no inline run) or stop
  std::condition_variable idle_cv_;  // drain() waits for an empty queue and no running item
  std::deque<Work> queue_;
  bool running_ = false;  // an item runs, on the worker or inline on a caller
  bool stop_ = false;
  // Lock-free views for the spin before blocking (spin_wait.h): whether work is queued or
  // running, and a count of changes the worker watches.
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> changes_{0};
  // Counted before an item is queued or run, so that a reader never misses a queued one.
  std::atomic<uint64_t> queued_{0};
  std::shared_ptr<host::Capture> capture_;
  std::thread worker_;
};

}  // namespace accel::rt
