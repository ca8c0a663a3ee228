// Test support for the kernel tests: device buffers on a real host-driver stream, and scalar
// reference conversions written independently of the kernels (plain C++ and c10's Half /
// BFloat16 rounding).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/abi.h"
#include "kernels/host/plan_executor.h"
#include "kernels/tables.h"
#include "runtime/host/host_driver.h"

namespace accel::kernels::testing {

// The host executor with a plan that splits scans and compactions into chunks of a few
// elements, their carries folded two at a time: every carry level runs on a small input.
struct DeepPlanExecutor : host::PlanExecutor {
  static ScanGeometry scanGeometry(rt::Stream) { return {4, 256, 3, 2}; }
};

inline const std::vector<DType>& allDTypes() {
#define ACCEL_LIST(NAME, TYPE, VALUE) DType::NAME,
  static const std::vector<DType> all{ACCEL_FORALL_DTYPES(ACCEL_LIST)};
#undef ACCEL_LIST
  return all;
}

inline bool isIntegral(DType t) {
  return t != DType::Float && t != DType::BFloat16 && t != DType::Half && t != DType::Double;
}

// The value `v` becomes once stored as `t` (PyTorch's rules: truncation toward zero, integers
// wrap, uint8 via int64, bool is != 0).
inline double roundTo(DType t, double v) {
  auto wrap = [&](auto zero) { return double(decltype(zero)(int64_t(v))); };
  switch (t) {
    case DType::Float: return double(float(v));
    case DType::Double: return v;
    case DType::Half: return double(float(c10::Half(float(v))));
    case DType::BFloat16: return double(float(c10::BFloat16(float(v))));
    case DType::Int64: return wrap(int64_t{});
    case DType::Int32: return wrap(int32_t{});
    case DType::Int16: return wrap(int16_t{});
    case DType::Int8: return wrap(int8_t{});
    case DType::UInt8: return wrap(uint8_t{});
    case DType::Bool: return v != 0 ? 1.0 : 0.0;
    // A real value stored as complex: its real part, rounded as the component type.
    case DType::ComplexHalf: return double(float(c10::Half(float(v))));
    case DType::ComplexFloat: return double(float(v));
    case DType::ComplexDouble: return v;
  }
  return v;
}

// Stores an already-representable value (roundTo) as `t`, and reads one back.
inline void storeElem(DType t, char* p, double v) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE)    \
  case DType::NAME: {                    \
    const TYPE x = static_cast<TYPE>(v); \
    std::memcpy(p, &x, sizeof x);        \
    return;                              \
  }
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
}

inline double loadElem(DType t, const char* p) {
  switch (t) {
#define ACCEL_CASE(NAME, TYPE, VALUE) \
  case DType::NAME: {                 \
    TYPE x;                           \
    std::memcpy(&x, p, sizeof x);     \
    return static_cast<double>(x);    \
  }
    ACCEL_FORALL_DTYPES(ACCEL_CASE)
#undef ACCEL_CASE
  }
  return 0;
}

// A host driver of its own, and the stream the kernels run on.
class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    driver_ = rt::host::makeHostDriver(rt::host::hostConfigFromEnv());
    ASSERT_EQ(driver_->streamCreate(0, &stream_, rt::kLowestPriority), rt::Error::Success);
  }
  void TearDown() override {
    for (void* p : allocations_) driver_->free(0, p);
    driver_->streamDestroy(stream_);
  }

 public:  // for Problem
  char* deviceAlloc(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(driver_->malloc(0, &p, bytes == 0 ? 1 : bytes), rt::Error::Success);
    allocations_.push_back(p);
    return static_cast<char*>(p);
  }
  void upload(char* dst, const std::vector<char>& src) {
    ASSERT_EQ(
        driver_->memcpyAsync(dst, src.data(), src.size(), rt::MemcpyKind::HostToDevice, stream_),
        rt::Error::Success);
    // `src` is pageable and may die right after: finish the copy now.
    ASSERT_EQ(driver_->streamSynchronize(stream_), rt::Error::Success);
  }
  void download(std::vector<char>& dst, const char* src) {
    ASSERT_EQ(
        driver_->memcpyAsync(dst.data(), src, dst.size(), rt::MemcpyKind::DeviceToHost, stream_),
        rt::Error::Success);
    ASSERT_EQ(driver_->streamSynchronize(stream_), rt::Error::Success);
  }

 protected:
  std::unique_ptr<rt::Driver> driver_;
  rt::Stream stream_ = nullptr;
  std::vector<void*> allocations_;
};

// An elementwise problem built the way the aten layer builds one: sizes innermost first, and
// per operand a dtype and element strides (innermost first; 0 broadcasts).
class Problem {
 public:
  Problem(KernelTest* t, std::vector<int64_t> sizes) : test_(t), sizes_(std::move(sizes)) {
    numel_ = 1;
    for (int64_t s : sizes_) numel_ *= s;
  }

  // Adds an operand whose storage element j holds roundTo(dtype, value(j)); returns its index.
  int add(DType dtype, std::vector<int64_t> strides, const std::function<double(int64_t)>& value) {
    Op op{dtype, std::move(strides)};
    int64_t extent = 1;
    for (size_t d = 0; d < sizes_.size(); ++d) extent += (sizes_[d] - 1) * op.strides[d];
    if (numel_ == 0) extent = 0;
    const int64_t es = elementSize(dtype);
    op.host.resize(extent * es);
    for (int64_t j = 0; j < extent; ++j)
      storeElem(dtype, &op.host[j * es], roundTo(dtype, value(j)));
    op.dev = test_->deviceAlloc(op.host.size());
    test_->upload(op.dev, op.host);
    ops_.push_back(std::move(op));
    return int(ops_.size()) - 1;
  }
  int addContiguous(DType dtype, const std::function<double(int64_t)>& value) {
    return add(dtype, contiguousStrides(), value);
  }
  std::vector<int64_t> contiguousStrides() const {
    std::vector<int64_t> s(sizes_.size());
    int64_t acc = 1;
    for (size_t d = 0; d < sizes_.size(); ++d) s[d] = acc, acc *= sizes_[d];
    return s;
  }

  ElementwiseDesc desc() const {
    ElementwiseDesc d;
    d.ndim = int(sizes_.size());
    d.numel = numel_;
    d.noperands = int(ops_.size());
    for (int i = 0; i < d.ndim; ++i) d.sizes[i] = sizes_[i];
    for (int k = 0; k < d.noperands; ++k) {
      d.op[k].data = ops_[k].dev;
      d.op[k].dtype = ops_[k].dtype;
      for (int i = 0; i < d.ndim; ++i)
        d.op[k].strides[i] = ops_[k].strides[i] * elementSize(ops_[k].dtype);
    }
    return d;
  }

  // Copies every operand back (synchronising the stream).
  void download() {
    for (Op& op : ops_) test_->download(op.host, op.dev);
  }
  // Operand k's value at logical (linear, innermost-first) index i, and at storage element j.
  double at(int k, int64_t i) const { return storage(k, storageIndex(k, i)); }
  double storage(int k, int64_t j) const {
    return loadElem(ops_[k].dtype, &ops_[k].host[j * elementSize(ops_[k].dtype)]);
  }
  int64_t storageIndex(int k, int64_t i) const {
    int64_t j = 0;
    for (size_t d = 0; d < sizes_.size(); ++d)
      j += (i % sizes_[d]) * ops_[k].strides[d], i /= sizes_[d];
    return j;
  }
  int64_t numel() const { return numel_; }
  int64_t storageSize(int k) const {
    return int64_t(ops_[k].host.size()) / elementSize(ops_[k].dtype);
  }

 private:
  struct Op {
    DType dtype;
    std::vector<int64_t> strides;
    std::vector<char> host;
    char* dev = nullptr;
  };
  KernelTest* test_;
  std::vector<int64_t> sizes_;
  int64_t numel_;
  std::vector<Op> ops_;
};

}  // namespace accel::kernels::testing
