// DDP's runtime statistics on accel: the forward, backward-compute and communication times in
// DistributedDataParallel's logging data (`_get_ddp_logging_data()`), measured with driver
// events on the device's current stream, as DDP's CUDA timer does with CUDA events. Without a
// timer registered for the device type, every DDP run on accel warned that it collects time
// statistics only for CPU and CUDA, and reported none.
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

#include <array>

#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel::dist {
namespace {

class AccelTimer final : public c10d::Timer {
 public:
  explicit AccelTimer(c10::Device device) : device_(device.index()) {}

  ~AccelTimer() override {
    for (rt::Event ev : events_) {
      if (ev != nullptr) rt::driver().eventDestroy(ev);
    }
  }

  void record(Event event) override {
    Timer::record(event);  // the host-side time, which DDP reports as well
    rt::Event& ev = events_[static_cast<size_t>(event)];
    if (ev == nullptr)
      ACCEL_RT_CHECK(rt::driver().eventCreate(device_, &ev, rt::kEventDefault), device_);
    ACCEL_RT_CHECK(rt::driver().eventRecord(ev, currentRuntimeStream(device_)), device_);
  }

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    rt::Event s = events_[static_cast<size_t>(start)];
    rt::Event e = events_[static_cast<size_t>(end)];
    // Never recorded (no backward yet, or only no_sync iterations): no figure, as on CUDA.
    if (s == nullptr || e == nullptr) return std::nullopt;
    // DDP asks at the start of a forward, when the previous iteration's work is mostly done.
    // The driver's own waits: statistics are not a user's synchronising op for the sync
    // debug mode.
    ACCEL_RT_CHECK(rt::driver().eventSynchronize(s), device_);
    ACCEL_RT_CHECK(rt::driver().eventSynchronize(e), device_);
    float ms = 0;
    if (rt::driver().eventElapsedTime(&ms, s, e) != rt::Error::Success || ms < 0) {
      return std::nullopt;  // the end belongs to an earlier iteration than the start
    }
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }

 private:
  int device_;
  std::array<rt::Event, 5> events_{};  // one per c10d::Timer::Event, created on first record
};

}  // namespace
}  // namespace accel::dist

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::kPrivateUse1, accel::dist::AccelTimer)
}  // namespace c10d
