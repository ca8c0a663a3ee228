// The counted CPU fallback: every aten op without an accel kernel copies its accel inputs to
// the CPU, runs ATen's CPU kernel and copies the results back. Each call is counted, timed
// and its copied bytes summed. TORCH_ACCEL_FALLBACK picks the policy:
//   warn (default)  warn once per op;   silent  no warning;   error  raise instead of falling back.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>

namespace accel {

enum class FallbackMode { Warn, Silent, Error };

struct FallbackStat {
  int64_t calls = 0;
  double seconds = 0;
  int64_t bytes_to_host = 0;
  int64_t bytes_to_device = 0;
};

void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Sends every aten op that has a CPU kernel for sparse or nested tensors and no accel one to
// the fallback by name: a backend fallback ranks below ATen's composite kernels, and structured
// ops register one for every backend that assumes dense outputs (CSR addmm would resize a
// dense result as sparse). Called once, when the extension loads, after every registration.
void routeLayoutsToFallback();

FallbackMode fallbackMode();
void setFallbackMode(FallbackMode mode);  // overrides the environment (tests, preflight)
std::map<std::string, FallbackStat> fallbackStats();
void resetFallbackStats();

}  // namespace accel

namespace accel {

// Sends one call of a typed kernel through the counted fallback, for inputs the kernel does
// not handle (complex dtypes, ...). Returns the op's first result.
template <class Ret, class... Args>
Ret fallbackCall(const c10::OperatorHandle& op, Args&&... args) {
  torch::jit::Stack stack;
  torch::jit::push(stack, std::forward<Args>(args)...);
  cpuFallback(op, &stack);
  return stack.front().to<Ret>();
}

inline c10::OperatorHandle findOp(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

}  // namespace accel
