// The reduction family's kernel ABI: reductions over any set of dimensions (sum, prod,
// max/min with indices, var/std, vector norms), cumsum, and nll_loss. The aten layer
// describes each problem with plain sizes and byte strides; knows no torch.
#pragma once

#include <cstdint>

#include "kernels/kernel_abi.h"

namespace accel::kernels {

enum class ReduceOp : int {
  Sum,     // out0 = factor * sum (factor is 1, or 1/N for mean)
  Prod,    // out0 = product
  Max,     // out0 = max value (if set), out1 = its first index (int64, if set)
  Min,     // likewise for the min
  Var,     // out0 = var (or std with `take_sqrt`), out1 = mean (if set)
  Norm,    // out0 = vector p-norm (p = 0, 1, 2, inf, -inf or any other)
};

struct ReduceParams {
  double factor = 1;      // Sum
  double correction = 1;  // Var: divisor is max(0, N - correction)
  bool take_sqrt = false; // Var: std instead of var
  double p = 2;           // Norm
};

// Each output element reduces the input over the reduced dimensions. Dimensions are listed
// innermost first; the reduced ones in the input's logical order, so that the linear index of
// a reduced element (what Max/Min report) is its row-major index over the reduced dims.
struct ReduceDesc {
  const char* in = nullptr;
  DType in_dtype = DType::Float;
  int out_ndim = 0;
  int64_t out_sizes[kMaxDims] = {};
  int64_t in_out_strides[kMaxDims] = {};  // input's byte strides along the kept dims
  int red_ndim = 0;
  int64_t red_sizes[kMaxDims] = {};
  int64_t in_red_strides[kMaxDims] = {};  // input's byte strides along the reduced dims
  int64_t out_numel = 1;
  int64_t red_numel = 1;
  char* out[2] = {nullptr, nullptr};  // null: not wanted
  DType out_dtype[2] = {DType::Float, DType::Int64};
  int64_t out_strides[2][kMaxDims] = {};  // byte strides along the kept dims
};

// Contiguous [outer, n, inner] problem along the middle dimension.
struct ScanDesc {
  const char* in = nullptr;
  DType in_dtype = DType::Float;
  char* out = nullptr;
  DType out_dtype = DType::Float;
  int64_t outer = 1, n = 1, inner = 1;
};

enum class LossReduction : int { None = 0, Mean = 1, Sum = 2 };  // at::Reduction's values

// nll_loss over contiguous input [n, c] (n = 1 for a 1-D input), int64 targets [n] and an
// optional weight [c] of the input's dtype. out is [n] (None) or a scalar; total_weight a
// scalar. Backward writes every element of grad_input [n, c].
struct NllLossDesc {
  const char* input = nullptr;
  const int64_t* target = nullptr;
  const char* weight = nullptr;  // null: all ones
  DType dtype = DType::Float;    // input, weight, output, total_weight, grads
  int64_t n = 0, c = 0;
  LossReduction reduction = LossReduction::Mean;
  int64_t ignore_index = -100;
  char* output = nullptr;
  char* total_weight = nullptr;
  const char* grad_output = nullptr;  // backward
  char* grad_input = nullptr;         // backward
};

struct ReduceTable {
  rt::Error (*reduce)(ReduceOp op, const ReduceDesc& d, ReduceParams params, rt::Stream stream);
  // out[.., j, ..] = sum of in[.., 0..j, ..], accumulated in float/double/int64 by out_dtype.
  rt::Error (*cumsum)(const ScanDesc& d, rt::Stream stream);
  // A target outside [0, c) that is not ignore_index fails the launch ("Target t is out of
  // bounds."), as a device-side check.
  rt::Error (*nll_loss_forward)(const NllLossDesc& d, rt::Stream stream);
  rt::Error (*nll_loss_backward)(const NllLossDesc& d, rt::Stream stream);
};

const ReduceTable& reduceTable();
const ReduceTable& hostReduceTable();

}  // namespace accel::kernels
