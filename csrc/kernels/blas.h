// The BLAS family: one strided batched GEMM. BLAS is the one thing the
// kernel library delegates: the host build runs an installed CPU BLAS on the stream's worker
// thread, the CUDA build calls cuBLAS on the stream. Knows no torch.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/abi.h"

namespace accel::kernels {

// For each b in [0, batch): C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], in BLAS's
// column-major convention (the aten layer maps row-major tensors onto it). op(A) is m x k,
// op(B) is k x n, C is m x n. Leading dimensions and batch strides count elements; a batch
// stride of A or B may be 0 (a broadcast operand). A, B and C share `dtype` (Float, Double,
// BFloat16, Half, ComplexFloat, ComplexDouble); 16-bit types accumulate in fp32. When
// beta == 0, C is not read.
struct GemmDesc {
  DType dtype = DType::Float;
  bool trans_a = false;
  bool trans_b = false;
  // Complex only, with trans_x: op(X) is the conjugate transpose (BLAS 'C'), so a lazily
  // conjugated operand (A.mH) needs no copy and rounds as CPU's BLAS call does.
  bool conj_a = false;
  bool conj_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  const void* a = nullptr;
  int64_t lda = 1, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 1, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 1, stride_c = 0;
  double alpha = 1;
  double beta = 0;
  // The imaginary parts of alpha and beta, read for the complex dtypes only.
  double alpha_imag = 0;
  double beta_imag = 0;
  // fp32 only: whether TF32 tensor cores may be used (torch.backends.cuda.matmul.allow_tf32).
  bool allow_tf32 = false;
  // Device scratch for the BLAS, owned by the stream it runs on (see workspace_bytes), or null.
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
};

struct BlasTable {
  rt::Error (*gemm)(const GemmDesc& d, rt::Stream stream);
  // The scratch a product on `stream` wants, in bytes (0: none). The aten layer keeps one
  // buffer of this size per stream and passes it in every GemmDesc for that stream, so
  // products on two streams never share scratch (cuBLAS's own per-handle workspace would be
  // shared by every stream the handle is set to).
  int64_t (*workspace_bytes)(rt::Stream stream);
};

const BlasTable& blasTable();  // the build of the driver in use

// The CUDA build's scratch per stream, from CUBLAS_WORKSPACE_CONFIG as PyTorch reads it
// (":SIZE_KIB:COUNT" pairs; ":4096:8" is 32 MiB), else PyTorch's defaults for a device of
// compute capability `major`: 32 MiB from Hopper on, 4096 KiB x 2 + 16 KiB x 8 before.
// Pure, so it is tested on any machine.
inline int64_t cublasWorkspaceBytes(const char* config, int major) {
  int64_t total = 0;
  for (const char* p = config; p != nullptr && (p = std::strchr(p, ':')) != nullptr;) {
    char* end = nullptr;
    const long long kib = std::strtoll(p + 1, &end, 10);
    if (end == p + 1 || *end != ':') break;
    const char* count_at = end + 1;
    const long long count = std::strtoll(count_at, &end, 10);
    if (end == count_at || kib < 0 || count < 0) break;
    total += static_cast<int64_t>(kib) * count * 1024;
    p = end;
  }
  if (total > 0) return total;
  return major >= 9 ? int64_t{32} << 20 : (int64_t{4096} * 2 + 16 * 8) << 10;
}

// The host build queues each product on the stream and delegates the arithmetic to a CPU BLAS
// that the framework layer installs at load time (LibTorch's); without one, gemm returns
// NotSupported.
using HostGemmFn = void (*)(const GemmDesc& d);
void installHostGemm(HostGemmFn fn);

}  // namespace accel::kernels
