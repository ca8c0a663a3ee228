// Factory ops computed on the device: arange, linspace, logspace and eye (the functional forms
// are composites over their out= forms).
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <cmath>

#include "aten/elementwise_desc.h"
#include "aten/floating_args.h"
#include "aten/op_forms.h"
#include "aten/index_desc.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/index.h"

namespace accel {
namespace {

struct ArangeOut {
  static bool native(const c10::Scalar&, const c10::Scalar&, const c10::Scalar&, at::Tensor& out) {
    return kernelSupports(out.scalar_type()) && out.scalar_type() != at::kBool;
  }
  static at::Tensor& compute(const c10::Scalar& start, const c10::Scalar& end,
                             const c10::Scalar& step, at::Tensor& out) {
    // ATen's rules: the bounds checked in double; an int64 output takes start, end and step
    // truncated to int64 (a fractional step that truncates to 0 is CPU's ValueError) and
    // integer arithmetic, every other dtype double arithmetic.
    const double xs = start.toDouble(), xe = end.toDouble(), xst = step.toDouble();
    TORCH_CHECK(xst > 0 || xst < 0, "step must be nonzero");
    TORCH_CHECK(std::isfinite(xs) && std::isfinite(xe), "unsupported range: ", xs, " -> ", xe);
    TORCH_CHECK(((xst > 0) && (xe >= xs)) || ((xst < 0) && (xe <= xs)),
                "upper bound and larger bound inconsistent with step sign");
    const bool integer = out.scalar_type() == at::kLong;
    double size_d;
    if (integer) {
      const int64_t s = start.toLong(), e = end.toLong(), st = step.toLong();
      TORCH_CHECK_VALUE(st != 0, "step must be nonzero");
      size_d = static_cast<double>((e - s + st - (st > 0 ? 1 : -1)) / st);
    } else {
      size_d = std::ceil((xe - xs) / xst);
    }
    TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
                "invalid size, possible overflow?");
    const auto size = static_cast<int64_t>(size_d);
    if (out.numel() != size) out.resize_({size});
    if (size == 0) return out;
    const kernels::ElementwiseDesc d = flatDesc({&out});
    const int device = out.device().index();
    const c10::Scalar first = integer ? c10::Scalar(start.toLong()) : start;
    const c10::Scalar delta = integer ? c10::Scalar(step.toLong()) : step;
    ACCEL_RT_CHECK(kernels::indexTable().arange(d, toKernelScalar(first), toKernelScalar(delta),
                                                currentRuntimeStream(device)),
                   device);
    return out;
  }
};

// a + step * i for the first half of [0, steps), b - step * (steps - 1 - i) for the rest, in
// the dtype of `opts`.
at::Tensor fromBothEnds(int64_t steps, double a, double b, double step,
                        const at::TensorOptions& opts) {
  const at::Tensor up = at::arange(steps, opts);                // i
  const at::Tensor down = at::arange(steps - 1, -1, -1, opts);  // steps - 1 - i
  const at::Tensor first_half = at::arange(steps, opts.dtype(at::kLong)) < steps / 2;
  return at::where(first_half, up * step + a, -(down * step) + b);
}

// linspace as ATen computes it, from both ends (the first half start + step * i, the second
// end - step * (steps - 1 - i)). An integer output takes start and end as integers, steps in
// double and truncates; a floating output computes in its own dtype, each multiply and add
// rounded to it (a half/bfloat16 step too), as CPU and CUDA do.
struct LinspaceOut {
  static bool native(const c10::Scalar& start, const c10::Scalar& end, int64_t, at::Tensor& out) {
    return kernelSupports(out.scalar_type()) && out.scalar_type() != at::kBool &&
           !start.isComplex() && !end.isComplex();
  }
  static at::Tensor& compute(const c10::Scalar& start, const c10::Scalar& end, int64_t steps,
                             at::Tensor& out) {
    TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
    at::native::resize_output(out, {steps});
    if (steps == 0) return out;
    if (steps == 1) return out.fill_(start);
    const bool integer = c10::isIntegralType(out.scalar_type(), false);
    const at::ScalarType compute = integer ? at::kDouble : out.scalar_type();
    const auto held = [compute](double v) { return heldAs(v, compute); };
    const double a = integer ? static_cast<double>(start.toLong()) : heldAs(start, compute);
    const double b = integer ? static_cast<double>(end.toLong()) : heldAs(end, compute);
    const double step = held(held(b - a) / held(static_cast<double>(steps - 1)));
    return out.copy_(fromBothEnds(steps, a, b, step, out.options().dtype(compute)));
  }
};

// logspace as CPU computes it: base ** e in double, e from both ends in double (start and end
// first rounded to the output's dtype), rounded once to the output. Floating outputs; integer
// ones (CPU computes those in float) go through the fallback.
struct LogspaceOut {
  static bool native(const c10::Scalar& start, const c10::Scalar& end, int64_t, double,
                     at::Tensor& out) {
    return at::isFloatingType(out.scalar_type()) && kernelSupports(out.scalar_type()) &&
           !start.isComplex() && !end.isComplex();
  }
  static at::Tensor& compute(const c10::Scalar& start, const c10::Scalar& end, int64_t steps,
                             double base, at::Tensor& out) {
    TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
    at::native::resize_output(out, {steps});
    if (steps == 0) return out;
    const double a = heldAs(start, out.scalar_type()), b = heldAs(end, out.scalar_type());
    if (steps == 1) return out.fill_(std::pow(base, start.toDouble()));
    const double step = (b - a) / static_cast<double>(steps - 1);
    return out.copy_(
        at::pow(base, fromBothEnds(steps, a, b, step, out.options().dtype(at::kDouble))));
  }
};

// eye(n, m) into out: zeros, then ones on the diagonal (out resized as CPU does, silently).
struct EyeOut {
  static bool native(int64_t, int64_t, at::Tensor& out) { return kernelKnows(out.scalar_type()); }
  static at::Tensor& compute(int64_t n, int64_t m, at::Tensor& out) {
    TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
    TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
    out.resize_({n, m});
    out.zero_();
    out.diagonal().fill_(1);
    return out;
  }
};
struct EyeSquareOut {
  static bool native(int64_t n, at::Tensor& out) { return EyeOut::native(n, n, out); }
  static at::Tensor& compute(int64_t n, at::Tensor& out) { return EyeOut::compute(n, n, out); }
};

// triu_indices / tril_indices: the [2, N] coordinates of a row x col matrix's upper (lower)
// triangle from diagonal `offset` on, row by row: the positions a mask over the grid keeps,
// found by nonzero (its count read from the device, as nonzero does).
template <bool Upper>
struct TriangleIndices {
  static bool native(int64_t, int64_t, int64_t, std::optional<at::ScalarType> dtype,
                     std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
    const at::ScalarType t = dtype.value_or(at::kLong);
    return t == at::kLong || t == at::kInt;
  }
  static at::Tensor compute(int64_t row, int64_t col, int64_t offset,
                            std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                            std::optional<at::Device> device, std::optional<bool>) {
    TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
    TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
    const at::TensorOptions options = at::TensorOptions(at::kLong).device(device);
    const at::Tensor above = at::arange(col, options).unsqueeze(0) -
                             at::arange(row, options).unsqueeze(1);  // column - row
    const at::Tensor keep = Upper ? above >= offset : above <= offset;
    return keep.nonzero().t().to(dtype.value_or(at::kLong)).contiguous();
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<ArangeOut>(m, "arange.start_out");
  registerNative<LinspaceOut>(m, "linspace.out");
  registerNative<LogspaceOut>(m, "logspace.out");
  registerNative<EyeOut>(m, "eye.m_out");
  registerNative<EyeSquareOut>(m, "eye.out");
  registerNative<TriangleIndices<true>>(m, "triu_indices");
  registerNative<TriangleIndices<false>>(m, "tril_indices");
}

}  // namespace
}  // namespace accel
