// Vector lanes on the host: a hot loop is compiled three times, for the x86-64 baseline (SSE2,
// four float lanes), for AVX2 with FMA (eight) and for AVX-512 (sixteen), and the widest the
// CPU has runs, as ATen's CPU kernels pick theirs; ATEN_CPU_CAPABILITY (default, avx2, avx512)
// caps it as it caps ATen's. All compile the same source; the build turns off the contraction
// of a * b + c into fma (CMakeLists.txt) and lane sums keep a fixed number of partial sums, so
// every width gives the same numbers.
//   inWidestLanes(f)   calls f() compiled for the widest lanes this CPU runs (the wider
//                      variants exist with GCC or Clang on x86-64); every call inside f is
//                      inlined (flatten), so the whole loop gets those lanes
#pragma once

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_TARGET_AVX2 __attribute__((target("avx2,fma"), flatten))
// GCC vectorizes for 256-bit registers even on AVX-512 unless told to prefer 512; Clang's
// spelling of the same is min_vector_width.
#if defined(__clang__)
#define ACCEL_TARGET_AVX512                                                                    \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma"), min_vector_width(512), \
                 flatten))
#else
#define ACCEL_TARGET_AVX512                                                                     \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"), \
                 flatten))
#endif

namespace accel::kernels::host {

enum class Lanes { kBaseline, kAvx2, kAvx512 };

inline Lanes hostLanes() {
  static const Lanes lanes = [] {
    Lanes widest = Lanes::kBaseline;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) widest = Lanes::kAvx2;
    if (widest == Lanes::kAvx2 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
      widest = Lanes::kAvx512;
    const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
    if (cap && std::strcmp(cap, "default") == 0) return Lanes::kBaseline;
    if (cap && std::strcmp(cap, "avx2") == 0 && widest == Lanes::kAvx512) return Lanes::kAvx2;
    return widest;
  }();
  return lanes;
}

template <class F>
ACCEL_TARGET_AVX2 auto inAvx2(const F& f) {
  return f();
}

template <class F>
ACCEL_TARGET_AVX512 auto inAvx512(const F& f) {
  return f();
}

template <class F>
auto inWidestLanes(const F& f) {
  switch (hostLanes()) {
    case Lanes::kAvx512: return inAvx512(f);
    case Lanes::kAvx2: return inAvx2(f);
    default: return f();
  }
}

}  // namespace accel::kernels::host
#else
namespace accel::kernels::host {
template <class F>
auto inWidestLanes(const F& f) {
  return f();
}
}  // namespace accel::kernels::host
#endif
