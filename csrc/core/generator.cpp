#include "core/generator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/TensorImpl.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/graph.h"

namespace accel {
namespace {

constexpr size_t kStateBytes = 2 * sizeof(uint64_t);

// splitmix64's finaliser: nearby (seed, offset) pairs give unrelated CPU seeds.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

AccelGeneratorImpl::AccelGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void AccelGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
void AccelGeneratorImpl::set_offset(uint64_t offset) {
  TORCH_CHECK(offset % 4 == 0, "offset must be a multiple of 4");
  offset_ = offset;
}
uint64_t AccelGeneratorImpl::get_offset() const { return offset_; }
uint64_t AccelGeneratorImpl::current_seed() const { return seed_; }

uint64_t AccelGeneratorImpl::seed() {
  const uint64_t s = c10::detail::getNonDeterministicRandom(/*is_cuda=*/true);
  set_current_seed(s);
  return s;
}

void AccelGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.device().is_cpu(),
              "RNG state must be a torch.ByteTensor");
  TORCH_CHECK(static_cast<size_t>(new_state.numel()) == kStateBytes,
              "RNG state is wrong size: expected ", kStateBytes, " bytes, got ", new_state.numel());
  uint64_t words[2];
  std::memcpy(words, new_state.data(), kStateBytes);
  TORCH_CHECK(words[1] % 4 == 0, "offset must be a multiple of 4");
  seed_ = words[0];
  offset_ = words[1];
}

c10::intrusive_ptr<c10::TensorImpl> AccelGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({static_cast<int64_t>(kStateBytes)}, at::kByte);
  const uint64_t words[2] = {seed_, offset_};
  std::memcpy(state.data_ptr(), words, kStateBytes);
  return state.getIntrusivePtr();
}

kernels::PhiloxState AccelGeneratorImpl::philoxState(uint64_t counters) {
  kernels::PhiloxState s;
  if (Graph::capturedPhiloxState(this, counters, &s)) return s;
  s.seed = seed_;
  s.offset = offset_;
  offset_ += counters;
  return s;
}

at::Generator AccelGeneratorImpl::fallbackCpuGenerator() {
  std::lock_guard<std::mutex> lock(mutex_);
  // A fresh one per call: concurrent fallback calls must not share a CPU generator.
  at::Generator cpu = at::detail::createCPUGenerator(mix(seed_ ^ mix(offset_)));
  offset_ += 4;  // one fallback call reserves a block of counters, like a launch
  return cpu;
}

AccelGeneratorImpl* AccelGeneratorImpl::clone_impl() const {
  auto* gen = new AccelGeneratorImpl(device().index(), seed_);
  gen->offset_ = offset_;
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
  return gens[resolveDevice(device)];
}

at::Generator newGenerator(c10::DeviceIndex device) {
  return at::make_generator<AccelGeneratorImpl>(resolveDevice(device));
}

}  // namespace accel
