// upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d, upsample_linear1d,
// upsample_bilinear2d, upsample_trilinear3d, upsample_bicubic2d and the antialiased
// _upsample_bilinear2d_aa and _upsample_bicubic2d_aa (F.interpolate(antialias=True),
// torchvision's Resize), forward and backward, composed of native accel ops so that they run on
// both drivers with no CPU fallback. All are separable: along each spatial dimension every
// output position reads 1 (nearest), 2 (linear) or 4 (cubic) source positions, or, antialiased,
// a window that widens with the downscale factor; the indices and weights are computed on the
// device with ATen's own formulas (ATen/native/UpSample.h: the scale, the source index, the
// clamps, the cubic coefficients; the antialiasing filters and their normalization). The
// forward gathers each tap along each dimension (index_select) and sums them weighted; the
// backward adds the weighted gradient back (index_add_). Float dtypes; half and bfloat16
// computed in float.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aten/floating_args.h"
#include "aten/index_desc.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// compute_scales_value: 1 / scale when the caller gave one, else in / out, in T.
template <class T>
T scaleOf(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / out;
}

// output_size has `spatial` sizes, all positive, for an input of `dims` = spatial + 2.
void checkSizes(const char* op, at::IntArrayRef output_size, int64_t dims, size_t spatial) {
  TORCH_CHECK(output_size.size() == spatial, "It is expected output_size equals to ", spatial,
              ", but got size ", output_size.size());
  TORCH_CHECK(dims == static_cast<int64_t>(spatial) + 2, op, ": expected a ", spatial + 2,
              "-D input (N, C, spatial...), got ", dims, " dimensions");
  for (const int64_t o : output_size)
    TORCH_CHECK(o > 0, "Input and output sizes should be greater than 0, but got output size ",
                output_size);
}

// How one dimension is resampled: the source index of each output position for each tap and,
// unless the mode is nearest, the tap's weight (in the opmath dtype).
enum class Mode { Nearest, NearestExact, Linear, Cubic, LinearAA, CubicAA };

bool antialiased(Mode m) { return m == Mode::LinearAA || m == Mode::CubicAA; }

struct Taps {
  std::vector<Tensor> index, weight;
};

// area_pixel_compute_scale, rounded to the opmath type.
double scaleAlong(int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
                  at::ScalarType type) {
  if (align_corners)
    return out > 1 ? (type == at::kDouble ? double(in - 1) / double(out - 1)
                                          : double(float(in - 1) / float(out - 1)))
                   : 0.0;
  return type == at::kDouble ? scaleOf<double>(scale, in, out) : scaleOf<float>(scale, in, out);
}

// nearest_idx (floorf(dst * scale) in float, with ATen's 1x and 2x shortcuts) and
// nearest_exact_idx (floorf((dst + 0.5) * scale)).
Tensor nearestIndex(Mode mode, int64_t in, int64_t out, std::optional<double> scale,
                    const Tensor& like) {
  const auto longs = like.options().dtype(at::kLong);
  const float s = scaleOf<float>(scale, in, out);
  if (mode == Mode::NearestExact)
    return ((at::arange(out, like.options().dtype(at::kDouble)) + 0.5) * double(s))
        .to(at::kFloat)
        .floor()
        .to(at::kLong)
        .clamp(0, in - 1);
  if (out == in) return at::arange(out, longs);
  if (out == 2 * in) return at::floor_divide(at::arange(out, longs), 2);
  // Clamped below too: a negative scale (CPU reads out of bounds) stays inside the input.
  return (at::arange(out, like.options().dtype(at::kFloat)) * s)
      .floor()
      .to(at::kLong)
      .clamp(0, in - 1);
}

// The cubic convolution kernel (A = -0.75) at distance x <= 1 and 1 < x < 2.
Tensor cubicNear(const Tensor& x) { return ((1.25 * x - 2.25) * x * x) + 1; }
Tensor cubicFar(const Tensor& x) { return ((-0.75 * x + 3.75) * x - 6.0) * x + 3.0; }

// The antialiasing filters: the triangle, and the cubic convolution kernel with A = -0.5.
Tensor aaFilter(Mode mode, const Tensor& x) {
  const Tensor a = x.abs();
  if (mode == Mode::LinearAA) return (1 - a).clamp_min(0);
  const Tensor near = ((1.5 * a - 2.5) * a * a) + 1;
  const Tensor far = ((-0.5 * a + 2.5) * a - 4.0) * a + 2.0;
  return at::where(a < 1, near, at::where(a < 2, far, at::zeros({}, a.options())));
}

// Antialiased taps: output i reads the window of sources within `support` of its center, the
// filter stretched by the downscale factor, the weights normalized to sum to 1; windows shorter
// than the widest are padded with zero weights.
Taps antialiasedTaps(Mode mode, int64_t in, int64_t out, bool align_corners,
                     std::optional<double> scale, const Tensor& like, at::ScalarType type) {
  const double s = scaleAlong(in, out, align_corners, scale, type);
  const double half_width = mode == Mode::LinearAA ? 1.0 : 2.0;
  const double support = s >= 1.0 ? half_width * s : half_width;
  const int64_t width = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  const Tensor center = (at::arange(out, like.options().dtype(type)) + 0.5) * s;
  const double inv_scale = s >= 1.0 ? 1.0 / s : 1.0;
  // ATen truncates toward zero, then clamps to the image.
  const Tensor first = (center - support + 0.5).trunc().to(at::kLong).clamp_min(0);
  const Tensor count =
      ((center + support + 0.5).trunc().to(at::kLong).clamp_max(in) - first).clamp(0, width);
  Taps taps;
  Tensor total;
  for (int64_t j = 0; j < width; ++j) {
    const Tensor w =
        at::where(count > j, aaFilter(mode, ((first + j).to(type) - center + 0.5) * inv_scale),
                  at::zeros({}, center.options()));
    total = total.defined() ? total + w : w;
    taps.index.push_back((first + j).clamp_max(in - 1));
    taps.weight.push_back(w);
  }
  const Tensor divisor = at::where(total != 0, total, at::ones({}, total.options()));
  for (Tensor& w : taps.weight) w = w / divisor;
  return taps;
}

Taps tapsAlong(Mode mode, int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
               const Tensor& like, at::ScalarType type) {
  if (mode == Mode::Nearest || mode == Mode::NearestExact)
    return {{nearestIndex(mode, in, out, scale, like)}, {}};
  if (antialiased(mode)) return antialiasedTaps(mode, in, out, align_corners, scale, like, type);
  const double s = scaleAlong(in, out, align_corners, scale, type);
  const Tensor dst = at::arange(out, like.options().dtype(type));
  // area_pixel_compute_source_index: linear clamps a negative source to 0, cubic does not.
  Tensor src = align_corners ? dst * s : (dst + 0.5) * s - 0.5;
  if (mode == Mode::Linear && !align_corners) src = src.clamp_min(0);
  // guard_index_and_lambda
  const Tensor i0 = src.floor().to(at::kLong).clamp_max(in - 1);
  const Tensor t = (src - i0.to(type)).clamp(0, 1);
  if (mode == Mode::Linear) return {{i0, i0 + (i0 < in - 1).to(at::kLong)}, {1 - t, t}};
  Taps taps;
  for (int64_t j = -1; j <= 2; ++j) taps.index.push_back((i0 + j).clamp(0, in - 1));
  taps.weight = {cubicFar(t + 1), cubicNear(t), cubicNear(1 - t), cubicFar(2 - t)};
  return taps;
}

// A weight along dimension d of a dims-D tensor, shaped to broadcast over the dimensions after.
Tensor along(const Tensor& w, int64_t d, int64_t dims) {
  c10::DimVector shape{w.size(0)};
  shape.resize(dims - d, 1);
  return w.view(shape);
}

// Upsampling over the last output_size.size() dimensions, one dimension at a time: the sum of
// each tap's gather, weighted. Nearest gathers in the input's dtype, the others in opmath.
Tensor separableForward(const char* op, Mode mode, const Tensor& self, at::IntArrayRef output_size,
                        bool align_corners, at::ArrayRef<std::optional<double>> scales,
                        const Output& out) {
  checkSizes(op, output_size, self.dim(), scales.size());
  const IndicesInRange taps_in_range;  // tapsAlong's indices are clamped to the input
  const auto type = at::toOpMathType(self.scalar_type());
  const bool nearest = mode == Mode::Nearest || mode == Mode::NearestExact;
  const bool aa = antialiased(mode);
  c10::DimVector shape{self.size(0), self.size(1)};
  shape.append(output_size.begin(), output_size.end());
  Tensor y = nearest ? self : self.to(type);
  for (size_t step = 0; step < scales.size(); ++step) {
    // Antialiased, as ATen: the last dimension first, and a dimension whose size stays is
    // left alone (its window would be the identity, but 0 * inf in a neighbour is NaN).
    const size_t i = aa ? scales.size() - 1 - step : step;
    const int64_t d = 2 + i;
    if (aa && self.size(d) == output_size[i]) continue;
    const Taps taps =
        tapsAlong(mode, self.size(d), output_size[i], align_corners, scales[i], self, type);
    Tensor sum;
    for (size_t k = 0; k < taps.index.size(); ++k) {
      Tensor g = y.index_select(d, taps.index[k]);
      if (!nearest) g = g * along(taps.weight[k], d, y.dim());
      sum = sum.defined() ? sum + g : g;
    }
    y = sum;
  }
  Tensor result = out.allocate(shape, self.options());
  result.copy_(y);
  return out.finish(result);
}

// Its gradient: each tap's weighted grad_output added back along each dimension, the last first.
Tensor separableBackward(const char* op, Mode mode, const Tensor& grad_output,
                         at::IntArrayRef output_size, at::IntArrayRef input_size,
                         bool align_corners, at::ArrayRef<std::optional<double>> scales,
                         const Output& out) {
  const size_t n = scales.size();
  TORCH_CHECK(input_size.size() == n + 2, "It is expected input_size equals to ", n + 2,
              ", but got size ", input_size.size());
  checkSizes(op, output_size, grad_output.dim(), n);
  c10::DimVector expected{input_size[0], input_size[1]};
  expected.append(output_size.begin(), output_size.end());
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(expected), op,
              ": expected grad_output of size ", at::IntArrayRef(expected), ", got ",
              grad_output.sizes());
  const IndicesInRange taps_in_range;
  const auto type = at::toOpMathType(grad_output.scalar_type());
  const bool nearest = mode == Mode::Nearest || mode == Mode::NearestExact;
  Tensor grad = grad_output.to(type);
  const bool aa = antialiased(mode);
  for (size_t i = n; i-- > 0;) {
    const int64_t d = 2 + i;
    if (aa && input_size[d] == output_size[i]) continue;
    const Taps taps =
        tapsAlong(mode, input_size[d], output_size[i], align_corners, scales[i], grad, type);
    c10::DimVector shape(grad.sizes().begin(), grad.sizes().end());
    shape[d] = input_size[d];
    Tensor sum = at::zeros(shape, grad.options());
    for (size_t k = 0; k < taps.index.size(); ++k)
      sum.index_add_(d, taps.index[k],
                     nearest ? grad : grad * along(taps.weight[k], d, grad.dim()));
    grad = sum;
  }
  Tensor result = out.allocate(input_size, grad_output.options());
  result.copy_(grad);
  return out.finish(result);
}

// The ATen name of the op that upsamples n dimensions in this mode, for its error messages.
std::string opName(Mode mode, size_t n, bool backward) {
  std::string name = mode == Mode::Nearest        ? "upsample_nearest"
                     : mode == Mode::NearestExact ? "_upsample_nearest_exact"
                     : mode == Mode::Cubic        ? "upsample_bicubic"
                     : mode == Mode::CubicAA      ? "_upsample_bicubic"
                     : mode == Mode::LinearAA     ? "_upsample_bilinear"
                     : n == 1                     ? "upsample_linear"
                     : n == 2                     ? "upsample_bilinear"
                                                  : "upsample_trilinear";
  const bool aa = antialiased(mode);
  return name + std::to_string(n) + "d" + (aa ? "_aa" : "") + (backward ? "_backward" : "");
}

template <size_t>
using Scale = std::optional<double>;

// The schemas, one scale per upsampled dimension: nearest modes take no align_corners.
template <Mode M, class Dims>
struct Nearest;
template <Mode M, size_t... I>
struct Nearest<M, std::index_sequence<I...>> {
  static bool native(const Tensor& self, at::IntArrayRef, Scale<I>...) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size, Scale<I>... scales,
                        const Output& out) {
    return separableForward(opName(M, sizeof...(I), false).c_str(), M, self, output_size, false,
                            {scales...}, out);
  }
};

template <Mode M, class Dims>
struct NearestBackward;
template <Mode M, size_t... I>
struct NearestBackward<M, std::index_sequence<I...>> {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef, Scale<I>...) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, Scale<I>... scales, const Output& out) {
    return separableBackward(opName(M, sizeof...(I), true).c_str(), M, grad_output, output_size,
                             input_size, false, {scales...}, out);
  }
};

template <Mode M, class Dims>
struct Interpolated;
template <Mode M, size_t... I>
struct Interpolated<M, std::index_sequence<I...>> {
  static bool native(const Tensor& self, at::IntArrayRef, bool, Scale<I>...) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size, bool align_corners,
                        Scale<I>... scales, const Output& out) {
    return separableForward(opName(M, sizeof...(I), false).c_str(), M, self, output_size,
                            align_corners, {scales...}, out);
  }
};

template <Mode M, class Dims>
struct InterpolatedBackward;
template <Mode M, size_t... I>
struct InterpolatedBackward<M, std::index_sequence<I...>> {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef, bool,
                     Scale<I>...) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, bool align_corners, Scale<I>... scales,
                        const Output& out) {
    return separableBackward(opName(M, sizeof...(I), true).c_str(), M, grad_output, output_size,
                             input_size, align_corners, {scales...}, out);
  }
};

// Registers an op's functional and out= forms and its backward's.
template <class Forward, class Backward>
void registerPair(torch::Library& m, const std::string& name) {
  const std::string out = name + ".out", backward = name + "_backward",
                    grad_input = backward + ".grad_input";
  registerForms<Forward>(m, name.c_str(), nullptr, out.c_str());
  registerForms<Backward>(m, backward.c_str(), nullptr, grad_input.c_str());
}

template <Mode M, size_t N>
void registerNearest(torch::Library& m) {
  using Dims = std::make_index_sequence<N>;
  registerPair<Nearest<M, Dims>, NearestBackward<M, Dims>>(m, opName(M, N, false));
}

template <Mode M, size_t N>
void registerInterpolated(torch::Library& m) {
  using Dims = std::make_index_sequence<N>;
  registerPair<Interpolated<M, Dims>, InterpolatedBackward<M, Dims>>(m, opName(M, N, false));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNearest<Mode::Nearest, 1>(m);
  registerNearest<Mode::Nearest, 2>(m);
  registerNearest<Mode::Nearest, 3>(m);
  registerNearest<Mode::NearestExact, 1>(m);
  registerNearest<Mode::NearestExact, 2>(m);
  registerNearest<Mode::NearestExact, 3>(m);
  registerInterpolated<Mode::Linear, 1>(m);
  registerInterpolated<Mode::Linear, 2>(m);
  registerInterpolated<Mode::Linear, 3>(m);
  registerInterpolated<Mode::Cubic, 2>(m);
  registerInterpolated<Mode::LinearAA, 2>(m);
  registerInterpolated<Mode::CubicAA, 2>(m);
}

}  // namespace
}  // namespace accel
