// A host stream: an in-order queue of work run by the stream's own worker thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "runtime/driver.h"
#include "runtime/host/sticky_error.h"

namespace accel::rt {

struct StreamImpl {
  using Work = std::function<void()>;

  // `error` is the owning device's sticky error; it must outlive the stream.
  StreamImpl(int device, int priority, host::StickyError& error, bool launch_blocking);
  // Runs what is still queued, then stops the worker. Must not be called from the stream's
  // own work.
  ~StreamImpl();
  StreamImpl(const StreamImpl&) = delete;
  StreamImpl& operator=(const StreamImpl&) = delete;

  // Queues `work` (the worker starts on first use). Under launch blocking, drains the queue
  // and runs `work` on the caller instead, returning LaunchFailure if it throws. Returns
  // NotSupported in a forked child, where the worker does not exist.
  Error enqueue(Work work);
  // Waits until every queued item has finished.
  void drain();
  bool idle();

  const int device;
  const int priority;

 private:
  void workerLoop();
  bool run(Work& work);  // false when it threw (the sticky error is then set)

  host::StickyError& error_;
  const bool launch_blocking_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for work or stop
  std::condition_variable idle_cv_;  // drain() waits for an empty queue and no running item
  std::deque<Work> queue_;
  bool running_ = false;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace accel::rt
