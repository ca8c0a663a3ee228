// _local_scalar_dense (behind .item()): one element to the host, synchronously.
#include <ATen/Dispatch_v2.h>
#include <torch/library.h>

#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "core/sync_point.h"

namespace accel {
namespace {

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  hostSyncPoint("aten::_local_scalar_dense (.item())");
  int device = self.device().index();
  rt::Stream stream = currentRuntimeStream(device);
  alignas(16) char buffer[16];
  TORCH_INTERNAL_ASSERT(self.itemsize() <= sizeof(buffer));
  ACCEL_RT_CHECK(rt::driver().memcpyAsync(buffer, self.data_ptr(), self.itemsize(),
                                          rt::MemcpyKind::DeviceToHost, stream),
                 device);
  ACCEL_RT_CHECK(rt::driver().streamSynchronize(stream), device);
  c10::Scalar result;
  AT_DISPATCH_V2(self.scalar_type(), "_local_scalar_dense_accel",
                 AT_WRAP([&] { result = c10::Scalar(*reinterpret_cast<scalar_t*>(buffer)); }),
                 AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX), c10::kComplexHalf, c10::kHalf, c10::kBool,
                 c10::kBFloat16, AT_EXPAND(AT_FLOAT8_TYPES),
                 AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES));
  return result;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_local_scalar_dense", local_scalar_dense); }

}  // namespace
}  // namespace accel
