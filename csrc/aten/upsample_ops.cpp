// upsample_nearest1d/2d/3d and upsample_bilinear2d, forward and backward, composed of native
// accel ops so that they run on both drivers with no CPU fallback. All are separable: the source
// positions along each spatial dimension (and, for bilinear, their weights) are computed on the
// device with ATen's own formulas (ATen/native/UpSample.h: the scale, the source index, the
// clamps), then the forward gathers along each dimension (index_select) and the backward adds
// the gradient back (index_add_). Float dtypes; half and bfloat16 computed in float.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <optional>

#include "aten/floating_args.h"
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

// The source index of each of the `out` positions along one dimension (nearest_idx).
Tensor nearestIndex(int64_t in, int64_t out, std::optional<double> scale, const Tensor& like) {
  const auto longs = like.options().dtype(at::kLong);
  if (out == in) return at::arange(out, longs);
  if (out == 2 * in) return at::floor_divide(at::arange(out, longs), 2);
  // floorf(dst * scale) in float, as ATen computes it.
  const float s = scaleOf<float>(scale, in, out);
  return (at::arange(out, like.options().dtype(at::kFloat)) * s)
      .floor()
      .to(at::kLong)
      .clamp_max(in - 1);
}

// The two source positions of each output position along one dimension and their weights, in
// the opmath dtype (compute_indices_weights_linear).
struct Linear {
  Tensor i0, i1, w0, w1;
};

Linear linearAlong(int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
                   const Tensor& like, at::ScalarType type) {
  const auto opts = like.options().dtype(type);
  double s;  // area_pixel_compute_scale, rounded to the opmath type
  if (align_corners)
    s = out > 1 ? (type == at::kDouble ? double(in - 1) / double(out - 1)
                                       : double(float(in - 1) / float(out - 1)))
                : 0.0;
  else
    s = type == at::kDouble ? scaleOf<double>(scale, in, out) : scaleOf<float>(scale, in, out);
  const Tensor dst = at::arange(out, opts);
  const Tensor src = align_corners ? dst * s : ((dst + 0.5) * s - 0.5).clamp_min(0);
  Linear l;
  l.i0 = src.floor().to(at::kLong).clamp_max(in - 1);
  l.w1 = (src - l.i0.to(type)).clamp(0, 1);
  l.w0 = 1 - l.w1;
  l.i1 = l.i0 + (l.i0 < in - 1).to(at::kLong);
  return l;
}

// Nearest upsampling over the last output_size.size() dimensions: one gather per dimension.
Tensor nearestForward(const char* op, const Tensor& self, at::IntArrayRef output_size,
                      at::ArrayRef<std::optional<double>> scales, const Output& out) {
  checkSizes(op, output_size, self.dim(), scales.size());
  c10::DimVector shape{self.size(0), self.size(1)};
  Tensor y = self;
  for (size_t i = 0; i < scales.size(); ++i) {
    y = y.index_select(2 + i, nearestIndex(self.size(2 + i), output_size[i], scales[i], self));
    shape.push_back(output_size[i]);
  }
  Tensor result = out.allocate(shape, self.options());
  result.copy_(y);
  return out.finish(result);
}

// Its gradient: grad_output added back along each dimension, the last first.
Tensor nearestBackward(const char* op, const Tensor& grad_output, at::IntArrayRef output_size,
                       at::IntArrayRef input_size, at::ArrayRef<std::optional<double>> scales,
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
  const auto type = at::toOpMathType(grad_output.scalar_type());
  Tensor grad = grad_output.to(type);
  for (size_t i = n; i-- > 0;) {
    c10::DimVector shape(grad.sizes().begin(), grad.sizes().end());
    shape[2 + i] = input_size[2 + i];
    grad = at::zeros(shape, grad.options())
               .index_add_(2 + i, nearestIndex(input_size[2 + i], output_size[i], scales[i], grad),
                           grad);
  }
  Tensor result = out.allocate(input_size, grad_output.options());
  result.copy_(grad);
  return out.finish(result);
}

struct UpsampleNearest1d {
  static bool native(const Tensor& self, at::IntArrayRef, std::optional<double>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size,
                        std::optional<double> scales, const Output& out) {
    return nearestForward("upsample_nearest1d", self, output_size, {scales}, out);
  }
};

struct UpsampleNearest2d {
  static bool native(const Tensor& self, at::IntArrayRef, std::optional<double>,
                     std::optional<double>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size,
                        std::optional<double> scales_h, std::optional<double> scales_w,
                        const Output& out) {
    return nearestForward("upsample_nearest2d", self, output_size, {scales_h, scales_w}, out);
  }
};

struct UpsampleNearest3d {
  static bool native(const Tensor& self, at::IntArrayRef, std::optional<double>,
                     std::optional<double>, std::optional<double>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size,
                        std::optional<double> scales_d, std::optional<double> scales_h,
                        std::optional<double> scales_w, const Output& out) {
    return nearestForward("upsample_nearest3d", self, output_size, {scales_d, scales_h, scales_w},
                          out);
  }
};

struct UpsampleNearest1dBackward {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef,
                     std::optional<double>) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, std::optional<double> scales,
                        const Output& out) {
    return nearestBackward("upsample_nearest1d_backward", grad_output, output_size, input_size,
                           {scales}, out);
  }
};

struct UpsampleNearest2dBackward {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef,
                     std::optional<double>, std::optional<double>) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, std::optional<double> scales_h,
                        std::optional<double> scales_w, const Output& out) {
    return nearestBackward("upsample_nearest2d_backward", grad_output, output_size, input_size,
                           {scales_h, scales_w}, out);
  }
};

struct UpsampleNearest3dBackward {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef,
                     std::optional<double>, std::optional<double>, std::optional<double>) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, std::optional<double> scales_d,
                        std::optional<double> scales_h, std::optional<double> scales_w,
                        const Output& out) {
    return nearestBackward("upsample_nearest3d_backward", grad_output, output_size, input_size,
                           {scales_d, scales_h, scales_w}, out);
  }
};

struct UpsampleBilinear2d {
  static bool native(const Tensor& self, at::IntArrayRef, bool, std::optional<double>,
                     std::optional<double>) {
    return floatingKernelType(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef output_size, bool align_corners,
                        std::optional<double> scales_h, std::optional<double> scales_w,
                        const Output& out) {
    checkSizes("upsample_bilinear2d", output_size, self.dim(), 2);
    const auto type = at::toOpMathType(self.scalar_type());
    const int64_t oh = output_size[0], ow = output_size[1];
    const Linear r = linearAlong(self.size(2), oh, align_corners, scales_h, self, type);
    const Linear c = linearAlong(self.size(3), ow, align_corners, scales_w, self, type);
    const Tensor x = self.to(type);
    const Tensor rows =
        x.index_select(2, r.i0) * r.w0.view({oh, 1}) + x.index_select(2, r.i1) * r.w1.view({oh, 1});
    const Tensor y = rows.index_select(3, c.i0) * c.w0 + rows.index_select(3, c.i1) * c.w1;
    Tensor result = out.allocate({self.size(0), self.size(1), oh, ow}, self.options());
    result.copy_(y);
    return out.finish(result);
  }
};

struct UpsampleBilinear2dBackward {
  static bool native(const Tensor& grad_output, at::IntArrayRef, at::IntArrayRef, bool,
                     std::optional<double>, std::optional<double>) {
    return floatingKernelType(grad_output);
  }
  static Tensor compute(const Tensor& grad_output, at::IntArrayRef output_size,
                        at::IntArrayRef input_size, bool align_corners,
                        std::optional<double> scales_h, std::optional<double> scales_w,
                        const Output& out) {
    TORCH_CHECK(input_size.size() == 4, "It is expected input_size equals to 4, but got size ",
                input_size.size());
    checkSizes("upsample_bilinear2d_backward", output_size, grad_output.dim(), 2);
    const int64_t n = input_size[0], c = input_size[1], h = input_size[2], w = input_size[3];
    const int64_t oh = output_size[0], ow = output_size[1];
    TORCH_CHECK(grad_output.sizes() == at::IntArrayRef({n, c, oh, ow}),
                "upsample_bilinear2d_backward: expected grad_output of size ",
                at::IntArrayRef({n, c, oh, ow}), ", got ", grad_output.sizes());
    const auto type = at::toOpMathType(grad_output.scalar_type());
    const auto opts = grad_output.options().dtype(type);
    const Tensor g = grad_output.to(type);
    const Linear r = linearAlong(h, oh, align_corners, scales_h, g, type);
    const Linear cl = linearAlong(w, ow, align_corners, scales_w, g, type);
    Tensor by_col = at::zeros({n, c, oh, w}, opts);
    by_col.index_add_(3, cl.i0, g * cl.w0).index_add_(3, cl.i1, g * cl.w1);
    Tensor grad = at::zeros({n, c, h, w}, opts);
    grad.index_add_(2, r.i0, by_col * r.w0.view({oh, 1}))
        .index_add_(2, r.i1, by_col * r.w1.view({oh, 1}));
    Tensor result = out.allocate({n, c, h, w}, grad_output.options());
    result.copy_(grad);
    return out.finish(result);
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<UpsampleNearest1d>(m, "upsample_nearest1d", nullptr, "upsample_nearest1d.out");
  registerForms<UpsampleNearest1dBackward>(m, "upsample_nearest1d_backward", nullptr,
                                           "upsample_nearest1d_backward.grad_input");
  registerForms<UpsampleNearest2d>(m, "upsample_nearest2d", nullptr, "upsample_nearest2d.out");
  registerForms<UpsampleNearest2dBackward>(m, "upsample_nearest2d_backward", nullptr,
                                           "upsample_nearest2d_backward.grad_input");
  registerForms<UpsampleNearest3d>(m, "upsample_nearest3d", nullptr, "upsample_nearest3d.out");
  registerForms<UpsampleNearest3dBackward>(m, "upsample_nearest3d_backward", nullptr,
                                           "upsample_nearest3d_backward.grad_input");
  registerForms<UpsampleBilinear2d>(m, "upsample_bilinear2d", nullptr, "upsample_bilinear2d.out");
  registerForms<UpsampleBilinear2dBackward>(m, "upsample_bilinear2d_backward", nullptr,
                                            "upsample_bilinear2d_backward.grad_input");
}

}  // namespace
}  // namespace accel
