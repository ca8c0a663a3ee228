// The normalization family's kernel ABI: softmax / log_softmax (forward and backward) along
// one dimension, and layer norm (forward and backward) over contiguous rows. Knows no torch.
#pragma once

#include <cstdint>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

// A contiguous [outer, dim, inner] problem along the middle dimension; every tensor has
// `dtype`. Forward: out = softmax(in). Backward: in = the forward's output, grad = its
// gradient, out = the input's gradient.
struct SoftmaxDesc {
  const char* in = nullptr;
  const char* grad = nullptr;  // backward only
  char* out = nullptr;
  DType dtype = DType::Float;
  int64_t outer = 1, dim = 1, inner = 1;
  bool log = false;
};

// Layer norm over contiguous rows [rows, cols]. weight/bias [cols] are optional (null); mean
// and rstd are [rows]; all of `dtype`. Backward writes whichever of dx/dweight/dbias is set.
struct LayerNormDesc {
  const char* x = nullptr;
  const char* weight = nullptr;
  const char* bias = nullptr;
  char* y = nullptr;
  char* mean = nullptr;
  char* rstd = nullptr;
  const char* dy = nullptr;  // backward
  char* dx = nullptr;
  char* dweight = nullptr;
  char* dbias = nullptr;
  DType dtype = DType::Float;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
};

struct NormTable {
  rt::Error (*softmax)(const SoftmaxDesc& d, rt::Stream stream);
  rt::Error (*softmax_backward)(const SoftmaxDesc& d, rt::Stream stream);
  rt::Error (*layer_norm)(const LayerNormDesc& d, rt::Stream stream);
  rt::Error (*layer_norm_backward)(const LayerNormDesc& d, rt::Stream stream);
};

const NormTable& normTable();
const NormTable& hostNormTable();

}  // namespace accel::kernels
