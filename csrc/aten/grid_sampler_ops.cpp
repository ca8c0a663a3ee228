// grid_sampler_2d / grid_sampler_3d and their backwards (F.grid_sample on 4-D and 5-D inputs)
// for the (bi/tri)linear and nearest modes with zeros, border or reflection padding, composed of
// native ops with ATen's formulas (ATen/native/GridSampler.h): each grid point is unnormalized
// to a source position per axis (mirrored into the input for reflection padding, then clamped
// for it and border padding), its 1 or 2^d neighbours are gathered from the input flattened to
// [N, C, spatial] with their weights, and a neighbour outside the input adds nothing. The
// backward adds the weighted grad_output back into those positions (scatter_add) and gives the
// grid the derivative of the weights. Bicubic reaches the CPU fallback. float and double, as
// CPU.
#include <ATen/TensorOperators.h>
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/ops/fmod.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/round.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <array>
#include <tuple>
#include <vector>

#include "aten/composed_loss.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// ATen's checks, in CPU's order (the dtype one is grid_sampler's own).
void checkArguments(const Tensor& input, const Tensor& grid, int64_t mode, int dims) {
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              input.scalar_type(), " and grid has ", grid.scalar_type());
  at::native::check_grid_sampler_common(input, grid);
  if (dims == 2)
    at::native::check_grid_sampler_2d(input, grid);
  else
    at::native::check_grid_sampler_3d(input, grid, mode);
}

// One coordinate: the source position and d(position)/d(grid) (grid_sampler_compute_source_index
// _set_grad).
struct Coordinate {
  Tensor pos, grad;
};

// Reflection padding folds the position back into [low, high] (the pixel centres with
// align_corners, else the pixel edges) by mirroring at the bounds; the gradient's sign flips
// with each mirroring (reflect_coordinates_set_grad).
void reflect(Tensor& pos, Tensor& grad, int64_t size, bool align_corners) {
  const double twice_low = align_corners ? 0 : -1;
  const double twice_high = align_corners ? 2.0 * (size - 1) : 2.0 * size - 1;
  if (twice_low == twice_high) {  // one pixel with align_corners: every point maps onto it
    pos = at::zeros_like(pos);
    grad = at::zeros_like(pos);
    return;
  }
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  const Tensor shifted = pos - low;
  const Tensor below = shifted < 0;
  const Tensor in = shifted.abs();
  const Tensor extra = at::fmod(in, span);
  const Tensor even = at::fmod((in / span).floor(), 2) == 0;
  pos = at::where(even, extra + low, (span - extra) + low);
  const Tensor one = at::ones({}, pos.options());
  grad = grad * at::where(below, -one, one) * at::where(even, one, -one);
}

Coordinate sourceIndex(const Tensor& g, int64_t size, int64_t padding, bool align_corners) {
  const double mult = align_corners ? (size - 1) / 2.0 : size / 2.0;
  Tensor pos = align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  Tensor grad = at::full({}, mult, g.options()).expand_as(g);
  if (padding == kReflection) reflect(pos, grad, size, align_corners);
  if (padding == kBorder || padding == kReflection) {
    // clip_coordinates_set_grad: a clipped position does not move with the grid, and the
    // borders themselves count as clipped.
    grad = at::where((pos <= 0) | (pos >= size - 1), at::zeros({}, g.options()), grad);
    pos = pos.clamp(0, size - 1);
  }
  return {pos, grad};
}

// One neighbour of every grid point: its flat index into the input's spatial positions (an
// in-range one when outside) and whether it is inside.
struct Corner {
  Tensor index, inside;
};

// The grid points' coordinates, one per spatial axis in the grid's order (x along the last
// input dimension, then y, then z), with each axis's size and stride in the flattened input.
struct Axis {
  Coordinate c;
  int64_t size, stride;
  Tensor lo;  // floor(position): the lower neighbour, linear modes only
};

Corner corner(const std::vector<Axis>& axes, const std::vector<Tensor>& at) {
  Tensor inside, index;
  for (size_t a = 0; a < axes.size(); ++a) {
    const Tensor in = (at[a] >= 0) & (at[a] < axes[a].size);
    const Tensor offset = at[a].clamp(0, axes[a].size - 1) * axes[a].stride;
    inside = inside.defined() ? inside & in : in;
    index = index.defined() ? index + offset : offset;
  }
  return {index.to(at::kLong), inside};
}

Tensor gathered(const Tensor& flat, const Corner& c) {
  const int64_t n = flat.size(0), ch = flat.size(1), p = c.index.size(1);
  const Tensor v = flat.gather(2, c.index.unsqueeze(1).expand({n, ch, p}));
  return v * c.inside.unsqueeze(1).to(flat.scalar_type());
}

// The neighbours of every grid point: nearest has one; the linear modes 2^d, corner k taking
// the upper neighbour along axis a when bit a of k is set (ATen's order: nw, ne, sw, se, then
// the same one plane further in z), each weighted by the product over the axes of the
// distance to the opposite neighbour (factor(k, a)), multiplied in axis order as ATen does.
struct Sampling {
  std::vector<Axis> axes;
  std::vector<Corner> corners;

  bool upper(size_t k, size_t a) const { return (k >> a) & 1; }
  Tensor factor(size_t k, size_t a) const {
    const Axis& x = axes[a];
    return upper(k, a) ? x.c.pos - x.lo : (x.lo + 1) - x.c.pos;
  }
  Tensor weight(size_t k) const {
    Tensor w = factor(k, 0);
    for (size_t a = 1; a < axes.size(); ++a) w = w * factor(k, a);
    return w;
  }
  // d(weight k)/d(position along axis a).
  Tensor weightSlope(size_t k, size_t a) const {
    Tensor w;
    for (size_t b = 0; b < axes.size(); ++b) {
      if (b == a) continue;
      w = w.defined() ? w * factor(k, b) : factor(k, b);
    }
    return upper(k, a) ? w : -w;
  }
};

// Explicit sizes for the flattened views: a -1 cannot be inferred for an empty batch.
int64_t spatial(const Tensor& input) { return c10::multiply_integers(input.sizes().slice(2)); }
int64_t gridPoints(const Tensor& grid) {
  return c10::multiply_integers(grid.sizes().slice(1, grid.dim() - 2));
}

Sampling sampling(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                  bool align_corners) {
  const int64_t n = input.size(0), dims = input.dim() - 2;
  const Tensor g = grid.reshape({n, gridPoints(grid), dims});
  Sampling s;
  int64_t stride = 1;
  for (int64_t a = 0; a < dims; ++a) {
    const int64_t size = input.size(input.dim() - 1 - a);
    s.axes.push_back({sourceIndex(g.select(2, a), size, padding, align_corners), size, stride});
    stride *= size;
  }
  if (mode == kNearest) {
    // nearbyint: halves to even, as at::round.
    std::vector<Tensor> at;
    for (const Axis& x : s.axes) at.push_back(at::round(x.c.pos));
    s.corners.push_back(corner(s.axes, at));
    return s;
  }
  for (Axis& x : s.axes) x.lo = x.c.pos.floor();
  for (size_t k = 0; k < (size_t{1} << dims); ++k) {
    std::vector<Tensor> at;
    for (size_t a = 0; a < s.axes.size(); ++a)
      at.push_back(s.upper(k, a) ? s.axes[a].lo + 1 : s.axes[a].lo);
    s.corners.push_back(corner(s.axes, at));
  }
  return s;
}

bool nativeArgs(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding) {
  const auto t = input.scalar_type();
  return (t == at::kFloat || t == at::kDouble) && grid.scalar_type() == t &&
         (mode == kBilinear || mode == kNearest) &&
         (padding == kZeros || padding == kBorder || padding == kReflection);
}

// grid_sampler_2d and grid_sampler_3d: the same op over two or three spatial axes.
template <int Dims>
struct GridSampler {
  static bool native(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, bool) {
    return nativeArgs(input, grid, mode, padding);
  }
  static Tensor compute(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                        bool align_corners, const Output& out) {
    checkArguments(input, grid, mode, Dims);
    const int64_t n = input.size(0), c = input.size(1);
    const Sampling s = sampling(input, grid, mode, padding, align_corners);
    const Tensor flat = input.reshape({n, c, spatial(input)});
    Tensor result;
    for (size_t k = 0; k < s.corners.size(); ++k) {
      Tensor v = gathered(flat, s.corners[k]);
      if (mode == kBilinear) v = v * s.weight(k).unsqueeze(1);
      result = result.defined() ? result + v : v;
    }
    std::vector<int64_t> shape{n, c};
    for (int64_t d = 1; d <= Dims; ++d) shape.push_back(grid.size(d));
    return into(out, result.view(shape).contiguous());
  }
};

template <int Dims>
struct GridSamplerBackward {
  static bool native(const Tensor& grad_output, const Tensor& input, const Tensor& grid,
                     int64_t mode, int64_t padding, bool, std::array<bool, 2>) {
    return nativeArgs(input, grid, mode, padding) &&
           grad_output.scalar_type() == input.scalar_type();
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& grad_output, const Tensor& input,
                                            const Tensor& grid, int64_t mode, int64_t padding,
                                            bool align_corners, std::array<bool, 2> output_mask) {
    checkArguments(input, grid, mode, Dims);
    const int64_t n = input.size(0), c = input.size(1);
    const Sampling s = sampling(input, grid, mode, padding, align_corners);
    const Tensor go = grad_output.reshape({n, c, gridPoints(grid)});
    Tensor grad_input, grad_grid;
    if (output_mask[0]) {
      Tensor flat = at::zeros({n, c, spatial(input)}, input.options());
      for (size_t k = 0; k < s.corners.size(); ++k) {
        const Corner& cr = s.corners[k];
        Tensor w = cr.inside.to(input.scalar_type());
        if (mode == kBilinear) w = w * s.weight(k);
        flat.scatter_add_(2, cr.index.unsqueeze(1).expand_as(go), go * w.unsqueeze(1));
      }
      grad_input = flat.view(input.sizes());
    }
    if (output_mask[1]) {
      if (mode == kNearest) {
        grad_grid = at::zeros(grid.sizes(), grid.options());
      } else {
        // Per axis: the weights' slopes times each neighbour's value and grad_output summed
        // over the channels, times d(position)/d(grid).
        const Tensor flat = input.reshape({n, c, spatial(input)});
        std::vector<Tensor> slopes(Dims);
        for (size_t k = 0; k < s.corners.size(); ++k) {
          const Tensor vg = (gathered(flat, s.corners[k]) * go).sum(1);  // [N, P]
          for (size_t a = 0; a < Dims; ++a) {
            const Tensor term = vg * s.weightSlope(k, a);
            slopes[a] = slopes[a].defined() ? slopes[a] + term : term;
          }
        }
        for (size_t a = 0; a < Dims; ++a) slopes[a] = slopes[a] * s.axes[a].c.grad;
        grad_grid = at::stack(slopes, 2).view(grid.sizes());
      }
    }
    return {grad_input, grad_grid};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<GridSampler<2>>(m, "grid_sampler_2d", nullptr, "grid_sampler_2d.out");
  registerNative<GridSamplerBackward<2>>(m, "grid_sampler_2d_backward");
  registerForms<GridSampler<3>>(m, "grid_sampler_3d", nullptr, "grid_sampler_3d.out");
  registerNative<GridSamplerBackward<3>>(m, "grid_sampler_3d_backward");
}

}  // namespace
}  // namespace accel
