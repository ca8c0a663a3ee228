// Vector lanes on the host: a hot loop is compiled twice, for the x86-64 baseline (SSE2, four
// float lanes) and for AVX2 with FMA (eight), and the wider one runs when the CPU has it, as
// ATen's CPU kernels pick theirs. Both compile the same source; the build turns off the
// contraction of a * b + c into fma (CMakeLists.txt), so both give the same numbers.
//   ACCEL_HOST_AVX2        defined where the AVX2 variant exists (GCC or Clang on x86-64)
//   ACCEL_TARGET_AVX2      the attribute that compiles a function for AVX2 + FMA
//   hostHasAvx2()          whether this CPU runs it
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_HOST_AVX2 1
#define ACCEL_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace accel::kernels::host {
inline bool hostHasAvx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
}  // namespace accel::kernels::host
#endif
