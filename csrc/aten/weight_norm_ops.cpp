// _weight_norm_interface and its backward (torch.nn.utils.weight_norm and its parametrization,
// over dim 0 or the last dim), composed of native accel ops in the opmath type. The norms are
// float for bfloat16 weights, as CPU returns them.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include <tuple>

#include "aten/floating_args.h"
#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// Every dimension of v but `dim`: the norm is taken over them.
c10::DimVector otherDims(const Tensor& v, int64_t dim) {
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1, "_weight_norm_interface: dim must be 0 or ",
              v.dim() - 1, " for a weight of size ", v.sizes(), ", got ", dim);
  c10::DimVector dims;
  for (int64_t d = 0; d < v.dim(); ++d)
    if (d != dim) dims.push_back(d);
  return dims;
}

bool sameFloating(const Tensor& v, const Tensor& g) {
  return floatingKernelType(v) && v.scalar_type() == g.scalar_type();
}

struct WeightNorm {
  static bool native(const Tensor& v, const Tensor& g, int64_t) { return sameFloating(v, g); }
  static std::tuple<Tensor, Tensor> compute(const Tensor& v, const Tensor& g, int64_t dim) {
    const auto type = at::toOpMathType(v.scalar_type());
    const Tensor vf = v.to(type);
    const Tensor norms = at::linalg_vector_norm(vf, 2, otherDims(v, dim), /*keepdim=*/true);
    TORCH_CHECK(g.numel() == norms.numel(), "_weight_norm_interface: g of size ", g.sizes(),
                " does not match the ", norms.numel(), " norms of v of size ", v.sizes());
    const Tensor w = (vf * (g.to(type).view(norms.sizes()) / norms)).to(v.scalar_type());
    return {w, norms.view(g.sizes())};
  }
};

struct WeightNormBackward {
  static bool native(const Tensor& grad_w, const Tensor& v, const Tensor& g, const Tensor&,
                     int64_t) {
    return sameFloating(v, g) && grad_w.scalar_type() == v.scalar_type();
  }
  // w = g v / |v|: grad_g = sum(grad_w v) / |v|, grad_v = g / |v| (grad_w - v grad_g / |v|).
  static std::tuple<Tensor, Tensor> compute(const Tensor& grad_w, const Tensor& v, const Tensor& g,
                                            const Tensor& norms, int64_t dim) {
    const auto type = at::toOpMathType(v.scalar_type());
    const auto dims = otherDims(v, dim);
    const Tensor gw = grad_w.to(type), vf = v.to(type);
    c10::DimVector kept(v.dim(), 1);  // the norms' shape, broadcasting against v
    kept[dim] = v.size(dim);
    TORCH_CHECK(norms.numel() == v.size(dim) && g.numel() == v.size(dim),
                "_weight_norm_interface_backward: norms of size ", norms.sizes(), " and g of size ",
                g.sizes(), " do not match v of size ", v.sizes(), " at dim ", dim);
    const Tensor nf = norms.to(type).view(kept);
    const Tensor grad_g = at::sum(gw * vf, dims, /*keepdim=*/true) / nf;
    const Tensor grad_v = (g.to(type).view(kept) / nf) * (gw - vf * (grad_g / nf));
    return {grad_v.to(v.scalar_type()), grad_g.view(g.sizes()).to(g.scalar_type())};
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<WeightNorm>(m, "_weight_norm_interface");
  registerNative<WeightNormBackward>(m, "_weight_norm_interface_backward");
}

}  // namespace
}  // namespace accel
