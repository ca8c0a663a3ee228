// The legacy profiler's device timing (torch.autograd.profiler.profile(use_device="accel")):
// torch records one of these events when each operation starts and ends, on the current
// stream, and reads their elapsed time when it builds the results.
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "core/device.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

struct AccelProfilerStubs final : torch::profiler::impl::ProfilerStubs {
  // Never throws: torch calls it inside every operation, unguarded. An event that could not
  // be recorded stays null and times as 0.
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const c10::DeviceIndex d = currentDevice();
    if (device != nullptr) *device = d;
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    rt::Event ev = nullptr;
    if (rt::driver().eventCreate(d, &ev, rt::kEventDefault) != rt::Error::Success) return;
    if (rt::driver().eventRecord(ev, currentRuntimeStream(d)) != rt::Error::Success) {
      rt::driver().eventDestroy(ev);
      return;
    }
    *event = std::shared_ptr<void>(
        ev, [](void* e) { rt::driver().eventDestroy(static_cast<rt::Event>(e)); });
  }

  // Microseconds between two recorded events; 0 when either is missing (an operation that
  // began before the profiler did).
  float elapsed(const ProfilerVoidEventStub* start,
                const ProfilerVoidEventStub* end) const override {
    if (start == nullptr || end == nullptr || !*start || !*end) return 0.f;
    auto e0 = static_cast<rt::Event>(start->get());
    auto e1 = static_cast<rt::Event>(end->get());
    if (rt::driver().eventSynchronize(e0) != rt::Error::Success ||
        rt::driver().eventSynchronize(e1) != rt::Error::Success) {
      return 0.f;
    }
    float ms = 0;
    if (rt::driver().eventElapsedTime(&ms, e0, e1) != rt::Error::Success) return 0.f;
    return ms * 1000.f;
  }

  // Marks and ranges for an external tool: accel has none (torch.accel.nvtx records its ranges
  // into torch.profiler instead).
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}

  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    const c10::DeviceIndex saved = currentDevice();
    for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
      setCurrentDevice(d);
      op(d);
    }
    setCurrentDevice(saved);
  }

  void synchronize() const override {
    for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
      ACCEL_RT_CHECK(rt::driver().deviceSynchronize(d), d);
    }
  }
};

const bool g_registered = [] {
  static AccelProfilerStubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  return true;
}();

}  // namespace
}  // namespace accel
