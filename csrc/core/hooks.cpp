// The PrivateUse1 hooks: what generic ATen code asks of a backend (generators, pinned
// memory, devices, storage resize).
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "core/device_allocator.h"
#include "core/device.h"
#include "core/generator.h"
#include "core/host_allocator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"

namespace accel {
namespace {

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override {
    try {
      return accel::deviceCount() > 0;
    } catch (...) {
      return false;
    }
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index) const override {
    return defaultGenerator(device_index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device_index) const override {
    return newGenerator(device_index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    int device = rt::driver().pointerDevice(data);
    TORCH_CHECK(device >= 0, "pointer ", data, " is not accel device memory");
    return {c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)};
  }
  bool isPinnedPtr(const void* data) const override { return accel::isPinnedPtr(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinnedHostAllocator(); }
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override { return true; }
  void init() const override { checkNotForked(); }
  c10::DeviceIndex deviceCount() const override { return accel::deviceCount(); }
  void setCurrentDevice(c10::DeviceIndex device) const override { accel::setCurrentDevice(device); }
  c10::DeviceIndex getCurrentDevice() const override { return currentDevice(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    c10::DeviceIndex old = currentDevice();
    if (device >= 0 && device != old) accel::setCurrentDevice(device);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }
  // Grows or shrinks a storage in place: new block, copy the common prefix, swap.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
    c10::DeviceIndex device = impl->device().index();
    c10::DataPtr fresh = impl->allocator()->allocate(newsize);
    size_t common = std::min(newsize, impl->nbytes());
    if (common > 0) {
      ACCEL_RT_CHECK(
          rt::driver().memcpyAsync(fresh.get(), impl->data(), common,
                                   rt::MemcpyKind::DeviceToDevice, currentRuntimeStream(device)),
          device);
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

// Registered at load time: ATen asks for the hooks before any accel op runs.
const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

}  // namespace
}  // namespace accel
