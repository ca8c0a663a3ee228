// Host GEMM: queued on the host driver's stream worker, so it runs asynchronously and in order
// like any kernel. The product itself is the CPU BLAS that the framework layer installs
// (aten/host_gemm.cpp: LibTorch's), which keeps this layer free of torch. That BLAS runs on
// the calling thread only; a large product is split here over the host pool, by batch or by
// columns of C, so the host's kernels share one set of threads.
#include <algorithm>
#include <atomic>

#include "kernels/blas.h"
#include "kernels/dtype.h"
#include "kernels/tables.h"
#include "runtime/host/device_access.h"
#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels {
namespace {
std::atomic<HostGemmFn> g_gemm{nullptr};
}  // namespace

void installHostGemm(HostGemmFn fn) { g_gemm.store(fn); }

namespace host {
namespace {

// Products of at least this many flops (about 0.1 ms on one core) are split over the pool.
constexpr double kSplitFlops = 2e6;
// Columns of C per part, at least: narrower slices lose the BLAS's blocking.
constexpr int64_t kMinColumns = 32;

int64_t partsOf(const GemmDesc& d) {
  const double flops = 2.0 * static_cast<double>(d.m) * d.n * d.k * d.batch;
  const int64_t threads = rt::host::numThreads();
  if (threads <= 1 || flops < kSplitFlops) return 1;
  if (d.batch >= threads) return threads;
  return std::clamp<int64_t>(d.n / kMinColumns, 1, threads);
}

// Part p of `parts` of the product: a range of the batch, or of C's columns (with op(B)'s).
GemmDesc partOf(const GemmDesc& d, int64_t p, int64_t parts) {
  GemmDesc part = d;
  const int64_t elem = elementSize(d.dtype);
  const bool by_batch = d.batch >= parts;
  const int64_t total = by_batch ? d.batch : d.n;
  const int64_t first = total * p / parts, last = total * (p + 1) / parts;
  auto offset = [&](const void* base, int64_t elements) {
    return static_cast<const char*>(base) + elements * elem;
  };
  if (by_batch) {
    part.batch = last - first;
    part.a = offset(d.a, first * d.stride_a);
    part.b = offset(d.b, first * d.stride_b);
    part.c = const_cast<char*>(offset(d.c, first * d.stride_c));
  } else {
    part.n = last - first;
    part.b = offset(d.b, first * (d.trans_b ? 1 : d.ldb));
    part.c = const_cast<char*>(offset(d.c, first * d.ldc));
  }
  return part;
}

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
    // The stream worker already holds one; held here too for the pool threads that run
    // parts of the product.
    rt::host::DeviceAccess access;
    const int64_t parts = partsOf(d);
    if (parts == 1) return fn(d);
    rt::host::parallelFor(0, parts, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p) fn(partOf(d, p, parts));
    });
  });
}

int64_t noWorkspace(rt::Stream) { return 0; }

}  // namespace

const BlasTable& blasTable() {
  static const BlasTable table{&gemm, &noWorkspace};
  return table;
}

}  // namespace host
}  // namespace accel::kernels
