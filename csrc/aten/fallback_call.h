// How the counted fallback (aten/fallback.h) runs one boxed call on the CPU: its accel tensor
// arguments (lists included) are copied to the CPU, ATen's CPU kernel runs, what the op wrote
// is copied back and its results are moved to the op's device.
//
// The CPU copies keep the arguments' layout and aliasing: each accel storage the call's tensors
// use stands as one CPU buffer, and each tensor on it becomes a CPU view of that buffer with
// its own sizes, strides and relative offset (only its elements are copied in). So CPU's
// kernels see exactly the call's strides (some pick a formula by them: det's LU), overlap
// (an out= that aliases an input, an expanded out=) and in-place aliasing, and apply their own
// rules and errors. After the call each written argument (out=, in-place self) is copied back;
// one the CPU kernel resized takes the CPU result's sizes and, when dense, its strides.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace accel {

// Runs `op` with the arguments on top of `stack` on the CPU; tensor results are moved to
// `device` (the op's accel device; none leaves them on the CPU).
void runOnCpu(const c10::OperatorHandle& op, torch::jit::Stack* stack,
              const std::optional<c10::Device>& device);

}  // namespace accel
