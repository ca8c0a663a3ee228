// The host driver's GEMM: LibTorch's CPU BLAS. The kernel layer queues the product on the
// stream (kernels/host/blas.cpp) and calls what is installed here, so only this layer includes
// ATen. This is the one place besides the fallback that views device memory as CPU tensors:
// BLAS is delegated, not rewritten. Float and double products call the Fortran sgemm_/dgemm_
// that LibTorch's library carries (MKL's or OpenBLAS's) directly; the rest, and a LibTorch
// without them, go through at::cpu::baddbmm_out, which picks MKL / oneDNN / OpenBLAS and
// handles transposed operands without copies. The direct call saves the CPU tensors and the
// structured op around each product: a small mm cost 2.4 us more than CPU eager's before.
#include <ATen/Context.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/from_blob.h>
#include <dlfcn.h>

#include <climits>
#include <type_traits>

#include "kernels/blas.h"

namespace accel {
namespace {

using kernels::DType;
using kernels::GemmDesc;

// The transpose of op(X), for a batch of column-major matrices with leading dimension ld, as
// a row-major-first (batch, cols, rows) view: strides (batch stride, ld, 1), or (.., 1, ld)
// when X is transposed. CPU BLAS paths (oneDNN for bf16 in particular) are fast for row-major
// outputs and slow for column-major ones, so the product is computed as
// C^T = op(B)^T @ op(A)^T, which for row-major tensors is their own layout.
at::Tensor transposedView(const void* data, bool trans, int64_t batch, int64_t rows, int64_t cols,
                          int64_t ld, int64_t batch_stride, at::ScalarType type) {
  return at::from_blob(const_cast<void*>(data), {batch, cols, rows},
                       {batch_stride, trans ? 1 : ld, trans ? ld : 1},
                       at::TensorOptions().dtype(type));
}

// The BLAS runs on the calling thread alone while it computes one product (the kernel layer
// splits large ones over the host pool). MKL's and OpenMP's own threads on top of the pool's
// would oversubscribe the cores: under load their spinning barriers made a 0.03 ms product
// take 20 ms. Both settings are per thread, so the user's CPU ops keep their threads. Found at
// run time: a LibTorch without MKL or OpenMP lacks them.
// LibTorch's CPU library, where its BLAS symbols are (not in the global scope: Python loads
// it as a dependency of a module opened RTLD_LOCAL).
void* libtorchCpu() {
  static void* const handle = []() -> void* {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&at::globalContext), &info) == 0) return nullptr;
    return dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
  }();
  return handle;
}

void* libtorchSymbol(const char* name) {
  void* handle = libtorchCpu();
  return handle ? dlsym(handle, name) : dlsym(RTLD_DEFAULT, name);
}

class SequentialBlas {
 public:
  SequentialBlas() {
    if (fns().mkl_local) mkl_before_ = fns().mkl_local(1);
    if (fns().omp_get && fns().omp_set) {
      omp_before_ = fns().omp_get();
      fns().omp_set(1);
    }
  }
  ~SequentialBlas() {
    if (fns().mkl_local) fns().mkl_local(mkl_before_);
    if (omp_before_ > 0) fns().omp_set(omp_before_);
  }
  SequentialBlas(const SequentialBlas&) = delete;
  SequentialBlas& operator=(const SequentialBlas&) = delete;

 private:
  struct Fns {
    int (*mkl_local)(int) = nullptr;  // returns the thread's previous setting (0: global)
    int (*omp_get)() = nullptr;
    void (*omp_set)(int) = nullptr;
  };
  static const Fns& fns() {
    static const Fns f = [] {
      Fns r;
      r.mkl_local = reinterpret_cast<int (*)(int)>(libtorchSymbol("MKL_Set_Num_Threads_Local"));
      r.omp_get = reinterpret_cast<int (*)()>(libtorchSymbol("omp_get_max_threads"));
      r.omp_set = reinterpret_cast<void (*)(int)>(libtorchSymbol("omp_set_num_threads"));
      return r;
    }();
    return f;
  }
  int mkl_before_ = 0;
  int omp_before_ = 0;
};

// The Fortran BLAS GEMM (column-major, 32-bit sizes) of one real type.
template <class T>
using FortranGemm = void (*)(const char* transa, const char* transb, const int* m, const int* n,
                             const int* k, const T* alpha, const T* a, const int* lda, const T* b,
                             const int* ldb, const T* beta, T* c, const int* ldc);

template <class T>
FortranGemm<T> fortranGemm() {
  static const auto fn = reinterpret_cast<FortranGemm<T>>(
      libtorchSymbol(std::is_same_v<T, float> ? "sgemm_" : "dgemm_"));
  return fn;
}

// The product through the Fortran GEMM, batch by batch; false when there is none or a size
// exceeds its 32-bit integers.
template <class T>
bool fortranBatches(const GemmDesc& d) {
  const FortranGemm<T> gemm = fortranGemm<T>();
  for (int64_t v : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc})
    if (v > INT_MAX) return false;
  if (gemm == nullptr) return false;
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  const int lda = static_cast<int>(d.lda), ldb = static_cast<int>(d.ldb);
  const int ldc = static_cast<int>(d.ldc);
  const char ta = d.trans_a ? 'T' : 'N', tb = d.trans_b ? 'T' : 'N';
  const T alpha = static_cast<T>(d.alpha), beta = static_cast<T>(d.beta);
  const T* a = static_cast<const T*>(d.a);
  const T* b = static_cast<const T*>(d.b);
  T* c = static_cast<T*>(d.c);
  for (int64_t i = 0; i < d.batch; ++i)
    gemm(&ta, &tb, &m, &n, &k, &alpha, a + i * d.stride_a, &lda, b + i * d.stride_b, &ldb, &beta,
         c + i * d.stride_c, &ldc);
  return true;
}

void cpuGemm(const GemmDesc& d) {
  SequentialBlas sequential;
  if (d.dtype == DType::Float && fortranBatches<float>(d)) return;
  if (d.dtype == DType::Double && fortranBatches<double>(d)) return;
  const auto type = static_cast<at::ScalarType>(d.dtype);
  at::Tensor at = transposedView(d.a, d.trans_a, d.batch, d.m, d.k, d.lda, d.stride_a, type);
  at::Tensor bt = transposedView(d.b, d.trans_b, d.batch, d.k, d.n, d.ldb, d.stride_b, type);
  if (d.conj_a) at = at.conj();  // a lazy conjugate: the BLAS call takes it as 'C'
  if (d.conj_b) bt = bt.conj();
  at::Tensor ct = transposedView(d.c, false, d.batch, d.m, d.n, d.ldc, d.stride_c, type);
  // With beta == 0, baddbmm and addmm ignore c's old values, as BLAS does. One product goes
  // through addmm, as CPU's mm runs it: baddbmm sums small products in a loop of its own,
  // which rounds otherwise.
  const bool complex = c10::isComplexType(type);
  const c10::Scalar beta =
      complex ? c10::Scalar(c10::complex<double>(d.beta, d.beta_imag)) : c10::Scalar(d.beta);
  const c10::Scalar alpha =
      complex ? c10::Scalar(c10::complex<double>(d.alpha, d.alpha_imag)) : c10::Scalar(d.alpha);
  if (d.batch == 1) {
    at::Tensor c0 = ct[0];
    at::cpu::addmm_out(c0, c0, bt[0], at[0], beta, alpha);
  } else {
    at::cpu::baddbmm_out(ct, ct, bt, at, beta, alpha);
  }
}

const bool g_installed = [] {
  kernels::installHostGemm(&cpuGemm);
  return true;
}();

}  // namespace
}  // namespace accel
