// CUDA GEMM: cublasGemmStridedBatchedEx on the stream's cudaStream_t. fp32 computes in fp32
// (TF32 only when the descriptor allows it, as torch.backends.cuda.matmul.allow_tf32 does);
// bf16 and fp16 accumulate in fp32; fp64 in fp64. Complex products are cuBLAS's complex GEMM
// (the C_32F / C_64F types of the same call), with complex alpha and beta.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "kernels/blas.h"
#include "kernels/cuda/executor.cuh"
#include "kernels/tables.h"
#include "runtime/cuda/cuda_stream.h"

namespace accel::kernels::cuda {
namespace {

// A cuBLAS status, with its message kept for the PyTorch error as for a CUDA call.
rt::Error checkCublas(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return rt::Error::Success;
  rt::cuda::lastMessage().assign(call).append(": ").append(cublasGetStatusString(s));
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED: return rt::Error::OutOfMemory;
    case CUBLAS_STATUS_INVALID_VALUE: return rt::Error::InvalidValue;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return rt::Error::NotSupported;
    default: return rt::Error::LaunchFailure;
  }
}

// One handle per (thread, device), created on first use, as cuBLAS handles must not be used
// by two threads at once. They are never destroyed: a handle outliving its thread costs a
// little memory, destroying one during process exit can crash inside the CUDA runtime.
cublasStatus_t handleFor(int device, cublasHandle_t* out) {
  thread_local std::unordered_map<int, cublasHandle_t> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    cublasHandle_t h = nullptr;
    if (cublasStatus_t s = cublasCreate(&h); s != CUBLAS_STATUS_SUCCESS) return s;
    it = handles.emplace(device, h).first;
  }
  *out = it->second;
  return CUBLAS_STATUS_SUCCESS;
}

int64_t workspaceBytes(rt::Stream stream) {
  static std::mutex mu;
  static std::unordered_map<int, int64_t> bytes;  // per device
  const int device = rt::cuda::toCudaStream(stream)->device;
  std::lock_guard<std::mutex> lock(mu);
  auto it = bytes.find(device);
  if (it == bytes.end()) {
    int major = 0;  // unknown: the smaller default
    if (ACCEL_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) !=
        rt::Error::Success)
      major = 0;
    it = bytes.emplace(device, cublasWorkspaceBytes(std::getenv("CUBLAS_WORKSPACE_CONFIG"), major))
             .first;
  }
  return it->second;
}

cublasOperation_t op(bool t, bool conj) {
  return t ? (conj ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
}

bool fitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

rt::Error gemm(const GemmDesc& d, rt::Stream stream) {
  if (d.m == 0 || d.n == 0 || d.batch == 0) return rt::Error::Success;
  if (!fitsInt(d.m) || !fitsInt(d.n) || !fitsInt(d.k) || !fitsInt(d.batch) || !fitsInt(d.lda) ||
      !fitsInt(d.ldb) || !fitsInt(d.ldc)) {
    return rt::Error::NotSupported;
  }
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (d.dtype) {
    case DType::Float:
      type = CUDA_R_32F;
      compute = d.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::Double:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case DType::BFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::Half:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::ComplexFloat:
      type = CUDA_C_32F;
      compute = d.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::ComplexDouble:
      type = CUDA_C_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default: return rt::Error::NotSupported;
  }
  const rt::cuda::CudaStream* s = rt::cuda::toCudaStream(stream);
  ACCEL_CUDA_RETURN_IF_ERROR(cudaSetDevice(s->device));
  cublasHandle_t handle;
  if (rt::Error e = checkCublas(handleFor(s->device, &handle), "cublasCreate");
      e != rt::Error::Success)
    return e;
  if (rt::Error e = checkCublas(cublasSetStream(handle, s->handle), "cublasSetStream");
      e != rt::Error::Success)
    return e;
  // After cublasSetStream, which resets the handle to its default workspace.
  if (d.workspace != nullptr) {
    if (rt::Error e = checkCublas(
            cublasSetWorkspace(handle, d.workspace, static_cast<size_t>(d.workspace_bytes)),
            "cublasSetWorkspace");
        e != rt::Error::Success)
      return e;
  }

  // Scaling factors have the compute type's precision, and are (real, imaginary) pairs for a
  // complex product (cuBLAS reads only the real part of a real one).
  const double alpha64[2] = {d.alpha, d.alpha_imag}, beta64[2] = {d.beta, d.beta_imag};
  const float alpha32[2] = {static_cast<float>(d.alpha), static_cast<float>(d.alpha_imag)};
  const float beta32[2] = {static_cast<float>(d.beta), static_cast<float>(d.beta_imag)};
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(alpha64)
                                                    : static_cast<const void*>(alpha32);
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(beta64)
                                                   : static_cast<const void*>(beta32);
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cublasStatus_t st = cublasGemmStridedBatchedEx(
      handle, op(d.trans_a, d.conj_a), op(d.trans_b, d.conj_b), m, n, k, alpha, d.a, type,
      static_cast<int>(d.lda), d.stride_a, d.b, type, static_cast<int>(d.ldb), d.stride_b, beta,
      d.c, type, static_cast<int>(d.ldc), d.stride_c, static_cast<int>(d.batch), compute,
      CUBLAS_GEMM_DEFAULT);
  if (rt::Error e = checkCublas(st, "cublasGemmStridedBatchedEx"); e != rt::Error::Success)
    return e;
  return rt::cuda::checkLaunch("cublasGemmStridedBatchedEx");
}

const BlasTable& blasTable() {
  static const BlasTable table{&gemm, &workspaceBytes};
  return table;
}

}  // namespace accel::kernels::cuda
