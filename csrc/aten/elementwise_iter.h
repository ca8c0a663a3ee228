// Shared plumbing of the native elementwise ops whose kernels take every input already in the
// compute dtype: converting inputs, moving Python scalars to the device, building the
// TensorIterator (broadcasting, output allocation and resize) and writing into an out= tensor
// of another dtype through a temporary.
#pragma once

#include <ATen/TensorIterator.h>

#include <functional>
#include <initializer_list>

#include "kernels/abi.h"

namespace accel {

// A 0-dim CPU tensor: a Python number (wrapped) or a CPU scalar, allowed next to accel tensors.
bool isHostScalar(const at::Tensor& t);

// t in dtype s (a native copy when it differs); a host scalar becomes an accel 0-dim tensor
// on `device`, filled natively (no host-to-device copy of its storage).
at::Tensor asComputeInput(const at::Tensor& t, c10::ScalarType s, c10::Device device);

// A Python number as PyTorch wraps it (a 0-dim CPU tensor that does not promote dims).
at::Tensor wrappedScalar(const c10::Scalar& s);

// The accel device of the first accel tensor in `ts`; checks that every other tensor is on it
// or a host scalar, with PyTorch's message.
c10::Device commonDevice(std::initializer_list<at::Tensor> ts, const char* op);

using KernelLaunch = std::function<rt::Error(const kernels::ElementwiseDesc&, rt::Stream)>;

// Runs `launch` over `inputs` (already in their kernel dtypes) into `out`: allocated with
// `out_dtype` when undefined; resized when given; computed through a temporary when its dtype
// is not `out_dtype` (after PyTorch's can-cast check). Returns the result.
at::Tensor runElementwise(const at::Tensor& out, c10::ScalarType out_dtype,
                          std::initializer_list<at::Tensor> inputs, const KernelLaunch& launch);

// The dtype float ops compute in: integers and bool promote to the default float dtype.
c10::ScalarType floatingOf(c10::ScalarType t);

}  // namespace accel
