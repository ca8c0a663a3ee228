// reflection_pad{1,2,3}d and replication_pad{1,2,3}d (F.pad modes 'reflect' and 'replicate'),
// forward and backward, composed of native accel ops so that they run on both drivers with no
// CPU fallback. Both paddings are separable: along each padded dimension the source position
// of every output position is computed on the device (arange, then a reflection or a clamp),
// the forward copies the interior and gathers the borders along it (index_select), and the
// backward adds the gradient back (index_add_), one dimension at a time. Negative padding
// crops, as on CPU.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "aten/floating_args.h"
#include "aten/index_desc.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// The source index of each output position along a dimension of `size` padded by (left, right).
Tensor sourceIndex(bool reflect, int64_t size, int64_t left, int64_t right, const Tensor& like) {
  const Tensor i = at::arange(-left, size + right, like.options().dtype(at::kLong));
  // Reflection about 0 and about size - 1 (valid because both paddings are below size).
  if (reflect) return (size - 1) - ((size - 1) - i.abs()).abs();
  return i.clamp(0, size - 1);
}

// The checks of ATen's reflection/replication pad meta functions, with their messages; returns
// the output sizes.
c10::DimVector padShape(bool reflect, int dims, const Tensor& self, at::IntArrayRef padding) {
  const char* name = reflect ? "reflection" : "replication";
  TORCH_CHECK(static_cast<int>(padding.size()) == 2 * dims, "padding size is expected to be ",
              2 * dims);
  const int64_t n = self.dim();
  bool valid = n == dims + 1 || n == dims + 2;
  // Only the batch dimension may be empty.
  for (int64_t d = n == dims + 2 ? 1 : 0; valid && d < n; ++d) valid = self.size(d) != 0;
  TORCH_CHECK(valid, "Expected ", dims + 1, "D or ", dims + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
              "for input, but got: ",
              self.sizes());
  c10::DimVector out(self.sizes().begin(), self.sizes().end());
  for (int i = 0; i < dims; ++i) {
    const int64_t d = n - 1 - i, l = padding[2 * i], r = padding[2 * i + 1], size = self.size(d);
    TORCH_CHECK(!reflect || (l < size && r < size), "Argument #", 4 + 2 * i,
                ": Padding size should be less than the corresponding input dimension, but got: "
                "padding (",
                l, ", ", r, ") at dimension ", d, " of input ", self.sizes());
    out[d] = size + l + r;
    TORCH_CHECK(out[d] >= 1, name, "_pad", dims, "d: input (size ", size, " at dimension ", d,
                ") is too small for padding (", l, ", ", r, "): calculated output size ", out[d]);
  }
  return out;
}

template <bool Reflect, int Dims>
struct Pad {
  static constexpr bool kComplex = true;
  // Any dtype index_select moves, complex too (the gradient takes floating and complex ones).
  static bool native(const Tensor& self, at::IntArrayRef) {
    return kernelKnows(self.scalar_type());
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef padding, const Output& out) {
    const auto shape = padShape(Reflect, Dims, self, padding);
    const IndicesInRange by_construction;  // sourceIndex is inside the checked sizes
    Tensor x = self;
    for (int i = 0; i < Dims; ++i) {
      const int64_t d = self.dim() - 1 - i, l = padding[2 * i], r = padding[2 * i + 1];
      x = padAlong(x, d, l, r);
    }
    Tensor result = out.allocate(shape, self.options());
    result.copy_(x);
    return out.finish(result);
  }

 private:
  // x padded along d: the interior a strided copy, only the borders gathered (a gather along
  // the innermost dimension costs per element what the copy costs per row).
  static Tensor padAlong(const Tensor& x, int64_t d, int64_t l, int64_t r) {
    const int64_t n = x.size(d), size = n + l + r;
    c10::DimVector sizes(x.sizes().begin(), x.sizes().end());
    sizes[d] = size;
    Tensor y = at::empty(sizes, x.options());
    const int64_t lo = std::max<int64_t>(l, 0), hi = size - std::max<int64_t>(r, 0);
    if (hi > lo) y.narrow(d, lo, hi - lo).copy_(x.narrow(d, lo - l, hi - lo));
    if (l > 0 || r > 0) {
      const Tensor from = sourceIndex(Reflect, n, l, r, x);
      if (l > 0) y.narrow(d, 0, l).copy_(x.index_select(d, from.narrow(0, 0, l)));
      if (r > 0) y.narrow(d, size - r, r).copy_(x.index_select(d, from.narrow(0, size - r, r)));
    }
    return y;
  }
};

template <bool Reflect, int Dims>
struct PadBackward {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& grad_output, const Tensor& self, at::IntArrayRef) {
    return (floatingKernelType(grad_output) || kernelSupportsComplex(grad_output.scalar_type())) &&
           grad_output.scalar_type() == self.scalar_type();
  }
  static Tensor compute(const Tensor& grad_output, const Tensor& self, at::IntArrayRef padding,
                        const Output& out) {
    const auto shape = padShape(Reflect, Dims, self, padding);
    TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(shape),
                Reflect ? "reflection" : "replication", "_pad", Dims,
                "d_backward: expected grad_output of size ", at::IntArrayRef(shape), ", got ",
                grad_output.sizes());
    // Accumulate in the opmath type: reflected and replicated positions are summed.
    const auto type = at::toOpMathType(grad_output.scalar_type());
    const IndicesInRange by_construction;
    Tensor g = grad_output.to(type);
    c10::DimVector sizes(shape);
    for (int i = Dims - 1; i >= 0; --i) {
      const int64_t d = self.dim() - 1 - i;
      sizes[d] = self.size(d);
      g = at::zeros(sizes, g.options())
              .index_add_(
                  d, sourceIndex(Reflect, self.size(d), padding[2 * i], padding[2 * i + 1], g), g);
    }
    Tensor result = out.allocate(self.sizes(), self.options());
    result.copy_(g);
    return out.finish(result);
  }
};

// The schema names are literals: the kernels keep the pointers for their fallback.
template <bool Reflect, int Dims>
void registerPad(torch::Library& m, const char* name, const char* out, const char* backward,
                 const char* grad_input) {
  registerForms<Pad<Reflect, Dims>>(m, name, nullptr, out);
  registerForms<PadBackward<Reflect, Dims>>(m, backward, nullptr, grad_input);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerPad<true, 1>(m, "reflection_pad1d", "reflection_pad1d.out", "reflection_pad1d_backward",
                       "reflection_pad1d_backward.grad_input");
  registerPad<true, 2>(m, "reflection_pad2d", "reflection_pad2d.out", "reflection_pad2d_backward",
                       "reflection_pad2d_backward.grad_input");
  registerPad<true, 3>(m, "reflection_pad3d", "reflection_pad3d.out", "reflection_pad3d_backward",
                       "reflection_pad3d_backward.grad_input");
  registerPad<false, 1>(m, "replication_pad1d", "replication_pad1d.out",
                        "replication_pad1d_backward", "replication_pad1d_backward.grad_input");
  registerPad<false, 2>(m, "replication_pad2d", "replication_pad2d.out",
                        "replication_pad2d_backward", "replication_pad2d_backward.grad_input");
  registerPad<false, 3>(m, "replication_pad3d", "replication_pad3d.out",
                        "replication_pad3d_backward", "replication_pad3d_backward.grad_input");
}

}  // namespace
}  // namespace accel
