// The AMP (GradScaler) kernels. Their control values (found_inf, inv_scale, the growth
// tracker) are one-element float32/int32 device tensors that the kernel itself reads and
// writes, so a scaler step never synchronises with the host.
#pragma once

#include "kernels/elementwise.h"

namespace accel::kernels {

struct AmpTable {
  // On float32 device scalars read by the kernel itself (no host reads): grads (operands
  // out = in, any floating dtype) *= *inv_scale, and *found_inf = 1 if any element is not
  // finite.
  rt::Error (*amp_unscale)(const ElementwiseDesc& d, float* found_inf, const float* inv_scale,
                           rt::Stream stream);
  // torch._amp_update_scale_: one-element launch over the scale (operands out = in = scale).
  rt::Error (*amp_update_scale)(const ElementwiseDesc& d, int32_t* growth_tracker,
                                const float* found_inf, double growth_factor, double backoff_factor,
                                int64_t growth_interval, rt::Stream stream);
  template <class Exec>
  static AmpTable make();
};
const AmpTable& ampTable();  // the build of the driver in use

// g * inv_scale, and found_inf = 1 if g is inf or NaN. Threads that find one all store the
// same 1.0f, so the race is benign (as in CUDA's kernel).
template <class T>
struct UnscaleOp {
  using compute_t = T;
  float* found_inf;
  const float* inv_scale;
  ACCEL_HD T operator()(T g) const {
    if (!(g == g && g - g == T(0))) *found_inf = 1.0f;
    return g * static_cast<T>(*inv_scale);
  }
};

// torch._amp_update_scale_ for one scale: back off on an overflow, grow after
// growth_interval clean steps (CUDA's amp_update_scale_cuda_kernel).
struct UpdateScaleOp {
  using compute_t = float;
  int32_t* growth_tracker;
  const float* found_inf;
  float growth_factor, backoff_factor;
  int64_t growth_interval;
  ACCEL_HD float operator()(float scale) const {
    if (*found_inf != 0.0f) {
      *growth_tracker = 0;
      return scale * backoff_factor;
    }
    const int64_t successful = static_cast<int64_t>(*growth_tracker) + 1;
    if (successful == growth_interval) {
      const float grown = scale * growth_factor;
      *growth_tracker = 0;
      // Do not grow into inf.
      return (grown == grown && grown - grown == 0.0f) ? grown : scale;
    }
    *growth_tracker = static_cast<int32_t>(successful);
    return scale;
  }
};

template <class Exec>
rt::Error launchAmpUnscale(const ElementwiseDesc& d, float* found_inf, const float* inv_scale,
                           rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  if (d.op[0].dtype != d.op[1].dtype || found_inf == nullptr || inv_scale == nullptr)
    return rt::Error::InvalidValue;
  return dispatchDType(d.op[0].dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (isFloating<S>) {
      return Exec::template run<S, S>(d, UnscaleOp<OpMath<S>>{found_inf, inv_scale}, stream);
    }
    return rt::Error::NotSupported;
  });
}

template <class Exec>
rt::Error launchAmpUpdateScale(const ElementwiseDesc& d, int32_t* growth_tracker,
                               const float* found_inf, double growth_factor, double backoff_factor,
                               int64_t growth_interval, rt::Stream stream) {
  if (rt::Error e = validate(d, 2); e != rt::Error::Success) return e;
  if (d.numel != 1 || d.op[0].dtype != DType::Float || d.op[1].dtype != DType::Float)
    return rt::Error::InvalidValue;
  return Exec::template run<float, float>(
      d,
      UpdateScaleOp{growth_tracker, found_inf, static_cast<float>(growth_factor),
                    static_cast<float>(backoff_factor), growth_interval},
      stream);
}

template <class Exec>
AmpTable AmpTable::make() {
  // The casts let nvcc resolve each function template's address.
  return {static_cast<decltype(AmpTable::amp_unscale)>(&launchAmpUnscale<Exec>),
          static_cast<decltype(AmpTable::amp_update_scale)>(&launchAmpUpdateScale<Exec>)};
}

}  // namespace accel::kernels
