// Sparse COO and compressed (CSR/CSC/BSR/BSC) tensors on accel. Their indices and values are
// ordinary accel tensors, so the ops that only build, take apart, resize or copy a sparse
// tensor are ATen's own device-agnostic kernels (the ones CUDA registers too). Every other
// op on a sparse accel tensor (to_dense, coalesce, sparse @ dense, sum, sampled_addmm, ...)
// goes through the counted CPU fallback, which moves sparse tensors with these kernels.
//
// Quantized tensors are not supported on accel: any op that reaches the QuantizedPrivateUse1
// key is refused by name (runOnCpu refuses a quantized result that would move to accel).
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <torch/library.h>

#include "aten/fallback.h"

namespace accel {
namespace {

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("empty.memory_format", at::native::empty_sparse);
  m.impl("empty_like", at::native::empty_like_sparse_coo);
  m.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors",
         at::native::new_with_dims_and_tensor_sparse_symint);
  m.impl("_indices", at::native::_indices_sparse);
  m.impl("_values", at::native::_values_sparse);
  m.impl("indices", at::native::indices_sparse);
  m.impl("values", at::native::values_sparse);
  m.impl("_nnz", at::native::_nnz_sparse);
  m.impl("sparse_dim", at::native::sparse_dim_sparse);
  m.impl("dense_dim", at::native::dense_dim_sparse);
  m.impl("_dimI", at::native::sparse_dim_sparse);
  m.impl("_dimV", at::native::dense_dim_sparse);
  m.impl("is_coalesced", at::native::is_coalesced_sparse);
  m.impl("_coalesced_", at::native::_coalesced_sparse_);
  m.impl("sparse_resize_", at::native::sparse_resize_);
  m.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_);
  m.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
  m.impl("copy_", at::native::copy_sparse_wrapper_);
  m.impl("clone", at::native::clone_sparse);
  m.impl("zero_", at::native::zero_sparse_);
}

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("empty.memory_format", at::native::empty_sparse_compressed);
  m.impl("empty_like", at::native::empty_like_sparse_csr);
  m.impl("resize_", at::native::resize_sparse_csr_);
  m.impl("resize_as_sparse_", at::native::resize_as_sparse_compressed_);
  m.impl("crow_indices", at::native::crow_indices_sparse_csr);
  m.impl("col_indices", at::native::col_indices_sparse_csr);
  m.impl("ccol_indices", at::native::ccol_indices_sparse_csr);
  m.impl("row_indices", at::native::row_indices_sparse_csr);
  m.impl("values", at::native::values_sparse_csr);
  m.impl("_nnz", at::native::_nnz_sparse_csr);
  m.impl("sparse_dim", at::native::sparse_dim_sparse_csr);
  m.impl("dense_dim", at::native::dense_dim_sparse_csr);
  m.impl("copy_", at::native::copy_sparse_compressed_);
  m.impl("clone", at::native::clone_sparse_compressed);
  m.impl("zero_", at::native::zero_sparse_csr_);
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}
TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

void refuseQuantized(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "quantized tensors are not supported on accel (",
                              op.schema().operator_name(),
                              " was called with one); quantize on the CPU");
}

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuseQuantized>());
}

}  // namespace
}  // namespace accel
