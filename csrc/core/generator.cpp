#include "core/generator.h"

#include <ATen/CPUGeneratorImpl.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/device.h"

namespace accel {

AccelGeneratorImpl::AccelGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      cpu_(at::detail::createCPUGenerator(seed)) {}

void AccelGeneratorImpl::set_current_seed(uint64_t seed) { cpu_.set_current_seed(seed); }
void AccelGeneratorImpl::set_offset(uint64_t offset) { cpu_.set_offset(offset); }
uint64_t AccelGeneratorImpl::get_offset() const { return cpu_.get_offset(); }
uint64_t AccelGeneratorImpl::current_seed() const { return cpu_.current_seed(); }
uint64_t AccelGeneratorImpl::seed() { return cpu_.seed(); }
void AccelGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  cpu_.unsafeGetGeneratorImpl()->set_state(new_state);
}
c10::intrusive_ptr<c10::TensorImpl> AccelGeneratorImpl::get_state() const {
  return cpu_.unsafeGetGeneratorImpl()->get_state();
}

AccelGeneratorImpl* AccelGeneratorImpl::clone_impl() const {
  auto* gen = new AccelGeneratorImpl(device().index());
  gen->set_state(*get_state());
  return gen;
}

const at::Generator& defaultGenerator(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<at::Generator> gens;
  std::call_once(once, [] {
    for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) {
      gens.push_back(at::make_generator<AccelGeneratorImpl>(i));
    }
  });
  if (device < 0) device = currentDevice();
  checkDeviceIndex(device);
  return gens[device];
}

at::Generator newGenerator(c10::DeviceIndex device) {
  if (device < 0) device = currentDevice();
  checkDeviceIndex(device);
  return at::make_generator<AccelGeneratorImpl>(device);
}

}  // namespace accel
