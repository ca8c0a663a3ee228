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

// Products of at least this many flops (about 0.1 ms on one core) are split over the pool,
// and so are products that read at least this many bytes of A and B: those are bound by
// bandwidth however few their flops (a decoding step's matrix-vector products), and each core
// streams its own part. A [1, 256] @ [256, 1000] product took 37 us on one thread, as CPU's
// BLAS on one (39), where CPU's on both took 22.
constexpr double kSplitFlops = 2e6;
constexpr double kSplitBytes = 1 << 17;
// Rows or columns of C per part, at least: narrower slices lose the BLAS's blocking.
constexpr int64_t kMinSlice = 32;
// Products of at most this many multiply-adds take about as long as waking the stream worker
// (a few microseconds): short work, run on the caller when the stream is idle.
constexpr double kShortMacs = 1 << 17;

// How a product splits: by batch, else along C's longer side. (A linear layer's C is
// column-major features x tokens, and a convolution's channels x pixels: either side can be
// the long one.)
enum class Split { Batch, Rows, Columns };

Split splitOf(const GemmDesc& d, int64_t threads) {
  if (d.batch >= threads) return Split::Batch;
  return d.m > d.n ? Split::Rows : Split::Columns;
}

int64_t partsOf(const GemmDesc& d, Split split, int64_t threads) {
  const double flops = 2.0 * static_cast<double>(d.m) * d.n * d.k * d.batch;
  const double bytes = static_cast<double>(elementSize(d.dtype)) * (d.m + d.n) * d.k * d.batch;
  if (threads <= 1 || (flops < kSplitFlops && bytes < kSplitBytes)) return 1;
  switch (split) {
    case Split::Batch: return threads;
    case Split::Rows: return std::clamp<int64_t>(d.m / kMinSlice, 1, threads);
    case Split::Columns: break;
  }
  return std::clamp<int64_t>(d.n / kMinSlice, 1, threads);
}

// Part p of `parts` of the product: a range of the batch, of C's rows (with op(A)'s), or of
// C's columns (with op(B)'s). Matrices are column-major.
GemmDesc partOf(const GemmDesc& d, Split split, int64_t p, int64_t parts) {
  GemmDesc part = d;
  const int64_t elem = elementSize(d.dtype);
  const int64_t total = split == Split::Batch ? d.batch : split == Split::Rows ? d.m : d.n;
  const int64_t first = total * p / parts, last = total * (p + 1) / parts;
  auto offset = [&](const void* base, int64_t elements) {
    return static_cast<const char*>(base) + elements * elem;
  };
  switch (split) {
    case Split::Batch:
      part.batch = last - first;
      part.a = offset(d.a, first * d.stride_a);
      part.b = offset(d.b, first * d.stride_b);
      part.c = const_cast<char*>(offset(d.c, first * d.stride_c));
      break;
    case Split::Rows:
      part.m = last - first;
      part.a = offset(d.a, first * (d.trans_a ? d.lda : 1));
      part.c = const_cast<char*>(offset(d.c, first));
      break;
    case Split::Columns:
      part.n = last - first;
      part.b = offset(d.b, first * (d.trans_b ? 1 : d.ldb));
      part.c = const_cast<char*>(offset(d.c, first * d.ldc));
      break;
  }
  return part;
}

rt::Error gemm(const GemmDesc& d, rt::Stream stream) {
  if (d.m == 0 || d.n == 0 || d.batch == 0) return rt::Error::Success;
  switch (d.dtype) {
    case DType::Float:
    case DType::Double:
    case DType::BFloat16:
    case DType::Half:
    case DType::ComplexFloat:
    case DType::ComplexDouble: break;
    default: return rt::Error::NotSupported;
  }
  const HostGemmFn fn = g_gemm.load();
  if (fn == nullptr) return rt::Error::NotSupported;
  auto work = [d, fn] {
    // The stream worker already holds one; held here too for the pool threads that run
    // parts of the product.
    rt::host::DeviceAccess access;
    const int64_t threads = rt::host::numThreads();
    const Split split = splitOf(d, threads);
    const int64_t parts = partsOf(d, split, threads);
    if (parts == 1) return fn(d);
    rt::host::parallelFor(0, parts, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p) fn(partOf(d, split, p, parts));
    });
  };
  const double macs = static_cast<double>(d.m) * d.n * d.k * d.batch;
  if (macs <= kShortMacs) return rt::host::enqueueShort(stream, std::move(work));
  return rt::host::enqueue(stream, std::move(work));
}

int64_t noWorkspace(rt::Stream) { return 0; }

}  // namespace

const BlasTable& blasTable() {
  static const BlasTable table{&gemm, &noWorkspace};
  return table;
}

}  // namespace host
}  // namespace accel::kernels
