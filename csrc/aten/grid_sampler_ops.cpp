// grid_sampler_2d and its backward (F.grid_sample on 4-D inputs) for the bilinear and nearest
// modes with zeros, border or reflection padding, composed of native ops with ATen's formulas
// (ATen/native/GridSampler.h): each grid point is unnormalized to a source position (mirrored
// into the input for reflection padding, then clamped for it and border padding), its 1 or 4
// neighbours are gathered from the input flattened to [N, C, H * W] with their weights, and a
// neighbour outside the input adds nothing. The backward adds the weighted grad_output back
// into those positions (scatter_add) and gives the grid the derivative of the weights. Bicubic
// reaches the CPU fallback. float and double, as CPU.
#include <ATen/TensorOperators.h>
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

// check_grid_sampler_common and check_grid_sampler_2d's messages.
void checkArguments(const Tensor& input, const Tensor& grid) {
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              input.scalar_type(), " and grid has ", grid.scalar_type());
  TORCH_CHECK(input.dim() == 4 && input.dim() == grid.dim(),
              "grid_sampler(): expected 4D input and grid with same number of dimensions, but "
              "got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(-1) == 2,
              "grid_sampler(): expected grid to have size 2 in last dimension, but got grid "
              "with sizes ",
              grid.sizes());
  for (int64_t i = 2; i < 4; ++i)
    TORCH_CHECK(input.size(i) > 0,
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                "has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
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

// One neighbour of every grid point: its flat index into H * W (an in-range one when outside),
// whether it is inside, and its value per channel [N, C, P] (zero outside).
struct Corner {
  Tensor index, inside;
};

Corner corner(const Tensor& x, const Tensor& y, int64_t h, int64_t w) {
  const Tensor inside = (x >= 0) & (x < w) & (y >= 0) & (y < h);
  const Tensor index = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).to(at::kLong);
  return {index, inside};
}

Tensor gathered(const Tensor& flat, const Corner& c) {
  const int64_t n = flat.size(0), ch = flat.size(1), p = c.index.size(1);
  const Tensor v = flat.gather(2, c.index.unsqueeze(1).expand({n, ch, p}));
  return v * c.inside.unsqueeze(1).to(flat.scalar_type());
}

// The grid points' coordinates and neighbours: nearest has one, bilinear four (nw, ne, sw, se)
// with ATen's weights.
struct Sampling {
  Coordinate x, y;
  std::vector<Corner> corners;
  std::vector<Tensor> weights;  // [N, P] each, bilinear only
  Tensor x0, y0;                // the north-west neighbour's coordinates
};

Sampling sampling(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                  bool align_corners) {
  const int64_t n = input.size(0), h = input.size(2), w = input.size(3);
  const Tensor g = grid.reshape({n, -1, 2});
  Sampling s;
  s.x = sourceIndex(g.select(2, 0), w, padding, align_corners);
  s.y = sourceIndex(g.select(2, 1), h, padding, align_corners);
  if (mode == kNearest) {
    // nearbyint: halves to even, as at::round.
    s.corners.push_back(corner(at::round(s.x.pos), at::round(s.y.pos), h, w));
    return s;
  }
  s.x0 = s.x.pos.floor();
  s.y0 = s.y.pos.floor();
  const Tensor x1 = s.x0 + 1, y1 = s.y0 + 1;
  const Tensor &ix = s.x.pos, &iy = s.y.pos;
  s.corners = {corner(s.x0, s.y0, h, w), corner(x1, s.y0, h, w), corner(s.x0, y1, h, w),
               corner(x1, y1, h, w)};
  s.weights = {(x1 - ix) * (y1 - iy), (ix - s.x0) * (y1 - iy), (x1 - ix) * (iy - s.y0),
               (ix - s.x0) * (iy - s.y0)};
  return s;
}

bool nativeArgs(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding) {
  const auto t = input.scalar_type();
  return (t == at::kFloat || t == at::kDouble) && grid.scalar_type() == t &&
         (mode == kBilinear || mode == kNearest) &&
         (padding == kZeros || padding == kBorder || padding == kReflection);
}

struct GridSampler2d {
  static bool native(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, bool) {
    return nativeArgs(input, grid, mode, padding);
  }
  static Tensor compute(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                        bool align_corners, const Output& out) {
    checkArguments(input, grid);
    const int64_t n = input.size(0), c = input.size(1);
    const Sampling s = sampling(input, grid, mode, padding, align_corners);
    const Tensor flat = input.reshape({n, c, -1});
    Tensor result;
    for (size_t k = 0; k < s.corners.size(); ++k) {
      Tensor v = gathered(flat, s.corners[k]);
      if (mode == kBilinear) v = v * s.weights[k].unsqueeze(1);
      result = result.defined() ? result + v : v;
    }
    return into(out, result.view({n, c, grid.size(1), grid.size(2)}).contiguous());
  }
};

struct GridSampler2dBackward {
  static bool native(const Tensor& grad_output, const Tensor& input, const Tensor& grid,
                     int64_t mode, int64_t padding, bool, std::array<bool, 2>) {
    return nativeArgs(input, grid, mode, padding) &&
           grad_output.scalar_type() == input.scalar_type();
  }
  static std::tuple<Tensor, Tensor> compute(const Tensor& grad_output, const Tensor& input,
                                            const Tensor& grid, int64_t mode, int64_t padding,
                                            bool align_corners, std::array<bool, 2> output_mask) {
    checkArguments(input, grid);
    const int64_t n = input.size(0), c = input.size(1);
    const Sampling s = sampling(input, grid, mode, padding, align_corners);
    const Tensor go = grad_output.reshape({n, c, -1});
    Tensor grad_input, grad_grid;
    if (output_mask[0]) {
      Tensor flat = at::zeros({n, c, input.size(2) * input.size(3)}, input.options());
      for (size_t k = 0; k < s.corners.size(); ++k) {
        const Corner& cr = s.corners[k];
        Tensor w = cr.inside.to(input.scalar_type());
        if (mode == kBilinear) w = w * s.weights[k];
        flat.scatter_add_(2, cr.index.unsqueeze(1).expand_as(go), go * w.unsqueeze(1));
      }
      grad_input = flat.view(input.sizes());
    }
    if (output_mask[1]) {
      if (mode == kNearest) {
        grad_grid = at::zeros(grid.sizes(), grid.options());
      } else {
        // d(weight)/d(ix) and d(weight)/d(iy) of nw, ne, sw, se, times each neighbour's value
        // and grad_output summed over the channels.
        const Tensor flat = input.reshape({n, c, -1});
        const Tensor &ix = s.x.pos, &iy = s.y.pos;
        const Tensor x1 = s.x0 + 1, y1 = s.y0 + 1;
        const std::array<Tensor, 4> dx = {-(y1 - iy), y1 - iy, -(iy - s.y0), iy - s.y0};
        const std::array<Tensor, 4> dy = {-(x1 - ix), -(ix - s.x0), x1 - ix, ix - s.x0};
        Tensor gx = at::zeros_like(ix), gy = at::zeros_like(iy);
        for (size_t k = 0; k < 4; ++k) {
          const Tensor vg = (gathered(flat, s.corners[k]) * go).sum(1);  // [N, P]
          gx = gx + vg * dx[k];
          gy = gy + vg * dy[k];
        }
        grad_grid = at::stack({gx * s.x.grad, gy * s.y.grad}, 2).view(grid.sizes());
      }
    }
    return {grad_input, grad_grid};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<GridSampler2d>(m, "grid_sampler_2d", nullptr, "grid_sampler_2d.out");
  registerNative<GridSampler2dBackward>(m, "grid_sampler_2d_backward");
}

}  // namespace
}  // namespace accel
