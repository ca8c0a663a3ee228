// The accel random generator: a counter-based Philox state (seed, offset), like CUDA's.
// Native random kernels reserve counter ranges from it (philoxState); random ops that still
// run through the CPU fallback draw from a CPU generator re-seeded from (seed, offset) for
// each call (fallbackCpuGenerator), so they too follow torch.accel.manual_seed and
// get/set_rng_state. Accel numbers are not CPU's for the same seed (neither are CUDA's).
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include "kernels/random.h"

namespace accel {

class AccelGeneratorImpl final : public c10::GeneratorImpl {
 public:
  explicit AccelGeneratorImpl(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  // The state is 16 bytes (a uint8 tensor): the seed then the offset, as uint64.
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // The state a launch draws from, moving the offset past the `counters` it consumes.
  // While the current stream captures a graph, the graph-safe state (core/graph.h) instead.
  // Callers hold mutex_ (as with CUDA's philox_cuda_state).
  kernels::PhiloxState philoxState(uint64_t counters);
  // A CPU generator for one fallback call: seeded from (seed, offset), which then advances.
  at::Generator fallbackCpuGenerator();

 private:
  AccelGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& defaultGenerator(c10::DeviceIndex device);
at::Generator newGenerator(c10::DeviceIndex device);

}  // namespace accel
