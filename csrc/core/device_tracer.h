// Device-side timing for torch.profiler: which operations queued work on an accel stream, and
// when that work ran, measured with the driver's timing events.
//
// The profiler session calls enter/exit around every operation and record_function range
// (Kineto's correlation ids), on the thread that runs it. An operation that queued work itself
// (the driver's per-thread work count grew, not counting its children) gets one timing event
// recorded after its work on the stream it used; its device span ends when that event
// completes and starts when the stream was free to run it: at the later of the operation's
// start on the host and the end of the previous span on the same stream. A range's device span
// runs from the start of the first such operation inside it to the end of the last.
#pragma once

#include <c10/core/Device.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/driver.h"

namespace accel {

struct DeviceActivity {
  uint64_t correlation = 0;  // the operation's (or range's) id, as the profiler numbered it
  bool user_range = false;   // a record_function range rather than an operation
  c10::DeviceIndex device = 0;
  int64_t stream = 0;    // c10::Stream id
  int64_t start_ns = 0;  // Unix time, as Kineto's timestamps
  int64_t end_ns = 0;
};

class DeviceTracer {
 public:
  DeviceTracer();
  ~DeviceTracer();
  DeviceTracer(const DeviceTracer&) = delete;
  DeviceTracer& operator=(const DeviceTracer&) = delete;

  // start() waits for each device (it takes the reference time of its events there);
  // stop() waits for the work already traced, so a session stopped mid-kernel keeps it.
  void start();
  void stop();
  void enter(uint64_t correlation, bool user_range);
  void exit(bool user_range);
  // The completed activities, after stop(), in the order their work was queued.
  std::vector<DeviceActivity> take();

 private:
  struct Pending {
    DeviceActivity activity;
    rt::Event end = nullptr;  // null for ranges
    int64_t first_op = -1;    // ranges: index of the first operation traced inside
    int64_t last_op = -1;
  };
  struct Frame;
  std::vector<Frame>& frames();
  void emit(const Frame& frame, std::vector<Frame>& stack);

  const uint64_t generation_;  // tells this tracer's thread-local frames from stale ones
  bool counts_work_ = false;   // the driver counts work; otherwise innermost ops are traced
  std::atomic<bool> active_{false};
  std::vector<int64_t> ref_ns_;  // per device: Unix time of ref_[d]
  std::vector<rt::Event> ref_;
  std::mutex mu_;
  std::vector<Pending> pending_;  // guarded by mu_
};

}  // namespace accel
