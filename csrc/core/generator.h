// The accel random generator. Its stream of numbers is a CPU generator's, so random ops that
// run through the CPU fallback draw from it and a seeded accel run reproduces a seeded CPU
// run. Native random kernels will move it to a counter-based (Philox) state.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace accel {

class AccelGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit AccelGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // The CPU generator that the fallback hands to CPU kernels in place of this one.
  const at::Generator& cpuGenerator() const { return cpu_; }

 private:
  AccelGeneratorImpl* clone_impl() const override;
  at::Generator cpu_;
};

const at::Generator& defaultGenerator(c10::DeviceIndex device);
at::Generator newGenerator(c10::DeviceIndex device);

}  // namespace accel
