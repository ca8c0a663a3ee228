// DeviceGuardImplInterface for accel: device switching, streams and events, so that
// c10::DeviceGuard, StreamGuard, torch.Stream and torch.Event work on accel.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "core/device_allocator.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"

namespace accel {
namespace {

rt::Event asEvent(void* event) { return static_cast<rt::Event>(event); }

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (old.index() != d.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kType, currentDevice()); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected an accel device, got ", d);
    setCurrentDevice(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < deviceCount()) setCurrentDevice(d.index());
  }

  c10::Stream getStream(c10::Device d) const override { return currentStream(d.index()); }
  c10::Stream getDefaultStream(c10::Device d) const override { return defaultStream(d.index()); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override {
    return streamFromPool(d.index(), high_priority);
  }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return streamFromPool(d.index(), priority < 0);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    c10::Stream old = currentStream(s.device_index());
    setCurrentStream(s);
    return old;
  }
  void* getStreamNativeHandle(const c10::Stream s) const override {
    return rt::driver().nativeStream(runtimeStream(s));
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return accel::deviceCount();
    } catch (...) {
      return 0;
    }
  }

  // Events are created lazily on first record, like CUDA's.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                static_cast<int>(device_index), " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    int device = stream.device_index();
    if (!*event) {
      rt::Event ev = nullptr;
      // torch.Event(enable_timing=True) asks for BACKEND_DEFAULT (CUDA's convention).
      unsigned flags =
          flag == c10::EventFlag::BACKEND_DEFAULT ? rt::kEventDefault : rt::kEventDisableTiming;
      ACCEL_RT_CHECK(rt::driver().eventCreate(device, &ev, flags), device);
      *event = ev;
    }
    ACCEL_RT_CHECK(rt::driver().eventRecord(asEvent(*event), runtimeStream(stream)), device);
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;
    ACCEL_RT_CHECK(rt::driver().streamWaitEvent(runtimeStream(stream), asEvent(event)),
                   stream.device_index());
  }
  bool queryEvent(void* event) const override {
    if (!event) return true;
    rt::Error err = rt::driver().eventQuery(asEvent(event));
    if (err == rt::Error::NotReady) return false;
    ACCEL_RT_CHECK(err, -1);
    return true;
  }
  void destroyEvent(void* event, const c10::DeviceIndex device_index) const noexcept override {
    if (event) rt::driver().eventDestroy(asEvent(event));
  }
  void synchronizeEvent(void* event) const override {
    hostSyncPoint("torch.Event.synchronize()");
    if (event) ACCEL_RT_CHECK(rt::driver().eventSynchronize(asEvent(event)), -1);
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex device_index) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    float ms = 0;
    ACCEL_RT_CHECK(rt::driver().eventElapsedTime(&ms, asEvent(start), asEvent(end)), device_index);
    return ms;
  }

  bool queryStream(const c10::Stream& stream) const override {
    rt::Error err = rt::driver().streamQuery(runtimeStream(stream));
    if (err == rt::Error::NotReady) return false;
    ACCEL_RT_CHECK(err, stream.device_index());
    return true;
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    hostSyncPoint("torch.Stream.synchronize()");
    ACCEL_RT_CHECK(rt::driver().streamSynchronize(runtimeStream(stream)), stream.device_index());
  }
  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    hostSyncPoint("torch.accelerator.synchronize()", SyncKind::DeviceSynchronize);
    const c10::DeviceIndex device = resolveDevice(device_index);
    ACCEL_RT_CHECK(rt::driver().deviceSynchronize(device), device);
  }
  // No `override`: torch 2.11 has no such virtual; from the torch that has it, this overrides.
  bool isStreamCapturing(const c10::Stream& stream) const {
    return accel::isStreamCapturing(stream);
  }
#if __has_include(<c10/core/DeviceCapability.h>)
  // torch.accelerator.get_device_capability: every dtype but the quantized ones (accel has
  // no quantized tensors).
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    resolveDevice(d.index());
    c10::DeviceCapability cap;
    auto& types = cap.capability_data.supported_scalar_types;
    types.has_QInt8 = types.has_QUInt8 = types.has_QInt32 = 0;
    types.has_QUInt4x2 = types.has_QUInt2x4 = 0;
    return cap;
  }
#endif
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr,
                             const c10::Stream& stream) const override {
    recordStream(data_ptr, stream);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

}  // namespace
}  // namespace accel
