// Host GEMM: queued on the host driver's stream worker, so it runs asynchronously and in order
// like any kernel. The product itself is the CPU BLAS that the framework layer installs
// (aten/host_gemm.cpp: LibTorch's), which keeps this layer free of torch.
#include <atomic>

#include "kernels/blas.h"
#include "kernels/tables.h"
#include "runtime/host/device_access.h"
#include "runtime/host/host_launch.h"

namespace accel::kernels {
namespace {
std::atomic<HostGemmFn> g_gemm{nullptr};
}  // namespace

void installHostGemm(HostGemmFn fn) { g_gemm.store(fn); }

namespace host {
namespace {

rt::Error gemm(const GemmDesc& d, rt::Stream stream) {
  if (d.m == 0 || d.n == 0 || d.batch == 0) return rt::Error::Success;
  switch (d.dtype) {
    case DType::Float:
    case DType::Double:
    case DType::BFloat16:
    case DType::Half: break;
    default: return rt::Error::NotSupported;
  }
  const HostGemmFn fn = g_gemm.load();
  if (fn == nullptr) return rt::Error::NotSupported;
  return rt::host::enqueue(stream, [d, fn] {
    // The stream worker already holds one; held here too because the CPU BLAS may run the
    // product on threads of its own.
    rt::host::DeviceAccess access;
    fn(d);
  });
}

}  // namespace

const BlasTable& blasTable() {
  static const BlasTable table{&gemm};
  return table;
}

}  // namespace host
}  // namespace accel::kernels
