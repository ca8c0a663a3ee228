// Native random ops on the Philox generator (core/generator.h): uniform_, normal_,
// normal with tensor means or deviations (torch.distributions.Normal.sample), bernoulli_ (float
// and tensor p), bernoulli, random_ (all three forms; randint reaches random_.from),
// exponential_, cauchy_, randperm, native_dropout and native_dropout_backward; and the samplers by
// rejection: _standard_gamma (Gamma, Beta), _sample_dirichlet, poisson and binomial, in every
// floating dtype, as CUDA has them (CPU lacks half and bfloat16 gamma and binomial). Every launch
// takes the generator's (seed, offset) under its lock and reserves the counters it uses, so seeded
// runs repeat, and host and CUDA (one kernel source) draw the same numbers.
#include <ATen/Dispatch.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/DistributionTemplates.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/argsort.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "aten/elementwise_desc.h"
#include "aten/op_forms.h"
#include "core/generator.h"
#include "core/rt_check.h"
#include "core/stream_pool.h"
#include "kernels/random.h"

namespace accel {
namespace {

using kernels::RandomKind;

AccelGeneratorImpl* generatorFor(const std::optional<at::Generator>& gen, const at::Tensor& t) {
  return at::get_generator_or_default<AccelGeneratorImpl>(gen,
                                                          defaultGenerator(t.device().index()));
}

// A descriptor over `self` (and the given extra operands) in logical element order, so the
// numbers do not depend on memory layout. Size-1 dimensions are dropped and neighbours that
// every operand walks as one are merged (the order is unchanged), so any number of
// dimensions fits the kernels' kMaxDims unless more than that many stay distinct.
kernels::ElementwiseDesc orderedDesc(std::initializer_list<at::Tensor> ts) {
  const at::Tensor& self = *ts.begin();
  kernels::ElementwiseDesc d;
  d.numel = self.numel();
  d.noperands = static_cast<int>(ts.size());
  int k = 0;
  for (const at::Tensor& t : ts) {
    d.op[k].data = static_cast<char*>(t.data_ptr());
    d.op[k].dtype = toKernelDType(t.scalar_type());
    ++k;
  }
  int ndim = 0;  // dims kept so far, innermost first
  for (int64_t dim = self.dim() - 1; dim >= 0; --dim) {
    const int64_t size = self.size(dim);
    if (size == 1) continue;
    // This dim is outside the last kept one: merge when each operand steps over it as over
    // `size` more of that one.
    bool merge = ndim > 0;
    k = 0;
    for (const at::Tensor& t : ts) {
      merge = merge &&
              t.stride(dim) * t.element_size() == d.op[k].strides[ndim - 1] * d.sizes[ndim - 1];
      ++k;
    }
    if (merge) {
      d.sizes[ndim - 1] *= size;
      continue;
    }
    TORCH_CHECK(ndim < kernels::kMaxDims, "random ops support at most ", kernels::kMaxDims,
                " dimensions that cannot be merged; got a tensor of sizes ", self.sizes(),
                " and strides ", self.strides());
    d.sizes[ndim] = size;
    k = 0;
    for (const at::Tensor& t : ts) d.op[k++].strides[ndim] = t.stride(dim) * t.element_size();
    ++ndim;
  }
  d.ndim = ndim;
  return d;
}

void launch(kernels::RandomDesc d, const at::Tensor& self,
            const std::optional<at::Generator>& gen) {
  if (d.elems.numel == 0) return;
  AccelGeneratorImpl* g = generatorFor(gen, self);
  {
    std::lock_guard<std::mutex> lock(g->mutex_);
    d.philox = g->philoxState(
        kernels::randomGroupsReserved(d.kind, d.elems.op[0].dtype, d.elems.numel, d.range));
  }
  int device = self.device().index();
  c10::DeviceGuard guard(self.device());
  ACCEL_RT_CHECK(kernels::randomTable().fill(d, currentRuntimeStream(device)), device);
}

// A std::numeric_limits value (`limit` of a value of the type) of a floating dtype, as double.
template <class Limit>
double floatingLimit(c10::ScalarType t, Limit limit) {
  double v = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "floatingLimit",
                                  [&] { v = static_cast<double>(limit(scalar_t{})); });
  return v;
}

bool floating(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble ||
         t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
}

struct Uniform {
  static bool native(at::Tensor& self, double, double, std::optional<at::Generator>) {
    return floating(self);
  }
  static at::Tensor& compute(at::Tensor& self, double from, double to,
                             std::optional<at::Generator> gen) {
    TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
                " > to=", to);
    kernels::RandomDesc d;
    d.elems = orderedDesc({self});
    d.kind = RandomKind::Uniform;
    d.a = from;
    d.b = to;
    launch(d, self, gen);
    return self;
  }
};

struct Normal {
  static bool native(at::Tensor& self, double, double, std::optional<at::Generator>) {
    return floating(self) || self.is_complex();
  }
  static at::Tensor& compute(at::Tensor& self, double mean, double std,
                             std::optional<at::Generator> gen) {
    TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
    if (self.is_complex()) {
      // As ATen does: the real and imaginary parts each take half the variance.
      at::Tensor parts = at::view_as_real(self);
      compute(parts, mean, std / std::sqrt(2.0), gen);
      return self;
    }
    kernels::RandomDesc d;
    d.elems = orderedDesc({self});
    d.kind = RandomKind::Normal;
    d.a = mean;
    d.b = std;
    launch(d, self, gen);
    return self;
  }
};

// normal(mean, std) with a tensor for either: ATen's composition, as CPU and CUDA run it (draw
// N(0, 1) or N(0, std), then scale and shift), drawing through accel's normal_.
template <typename>
struct NormalDraw {
  void operator()(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
    TORCH_CHECK_NOT_IMPLEMENTED(floating(self), "\"normal_kernel_accel\" not implemented for '",
                                self.scalar_type(), "'");
    Normal::compute(self, mean, std, gen);
  }
};
struct PhiloxRng {};  // the templates' RNG parameter; NormalDraw takes the generator itself

at::Tensor normalTensorFloat(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalDraw, PhiloxRng>(mean, std, gen);
}
at::Tensor& normalTensorFloatOut(const at::Tensor& mean, double std,
                                 std::optional<at::Generator> gen, at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalDraw, PhiloxRng>(out, mean, std, gen);
}
at::Tensor normalFloatTensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalDraw, PhiloxRng>(mean, std, gen);
}
at::Tensor& normalFloatTensorOut(double mean, const at::Tensor& std,
                                 std::optional<at::Generator> gen, at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalDraw, PhiloxRng>(out, mean, std, gen);
}
at::Tensor normalTensorTensor(const at::Tensor& mean, const at::Tensor& std,
                              std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalDraw, PhiloxRng>(mean, std, gen);
}
at::Tensor& normalTensorTensorOut(const at::Tensor& mean, const at::Tensor& std,
                                  std::optional<at::Generator> gen, at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalDraw, PhiloxRng>(out, mean, std, gen);
}

struct BernoulliFloat {
  static bool native(at::Tensor& self, double, std::optional<at::Generator>) {
    return kernelSupports(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, double p, std::optional<at::Generator> gen) {
    TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
    kernels::RandomDesc d;
    d.elems = orderedDesc({self});
    d.kind = RandomKind::Bernoulli;
    d.a = p;
    launch(d, self, gen);
    return self;
  }
};

struct BernoulliTensor {
  static bool native(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator>) {
    return kernelSupports(self.scalar_type()) && floating(p) && p.is_privateuseone();
  }
  static at::Tensor& compute(at::Tensor& self, const at::Tensor& p,
                             std::optional<at::Generator> gen) {
    // p must broadcast to self (CPU's message from expand).
    at::Tensor pe = p.expand(self.sizes());
    kernels::RandomDesc d;
    d.elems = orderedDesc({self, pe});
    d.kind = RandomKind::BernoulliTensor;
    launch(d, self, gen);
    return self;
  }
};

struct Bernoulli {
  static bool native(const at::Tensor& self, std::optional<at::Generator>) {
    return floating(self) && self.is_privateuseone();
  }
  static at::Tensor compute(const at::Tensor& self, std::optional<at::Generator> gen) {
    at::Tensor out = at::empty(self.sizes(), self.options());
    return BernoulliTensor::compute(out, self, gen);
  }
};

struct Exponential {
  static bool native(at::Tensor& self, double, std::optional<at::Generator>) {
    return floating(self);
  }
  static at::Tensor& compute(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
    TORCH_CHECK(lambda > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambda);
    const double eps = floatingLimit(
        self.scalar_type(), [](auto x) { return std::numeric_limits<decltype(x)>::epsilon(); });
    kernels::RandomDesc d;
    d.elems = orderedDesc({self});
    d.kind = RandomKind::Exponential;
    d.a = lambda;
    d.b = eps / 2;
    launch(d, self, gen);
    return self;
  }
};

struct Cauchy {
  static bool native(at::Tensor& self, double, double, std::optional<at::Generator>) {
    return floating(self);
  }
  static at::Tensor& compute(at::Tensor& self, double median, double sigma,
                             std::optional<at::Generator> gen) {
    TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
    kernels::RandomDesc d;
    d.elems = orderedDesc({self});
    d.kind = RandomKind::Cauchy;
    d.a = median;
    d.b = sigma;
    launch(d, self, gen);
    return self;
  }
};

// random_ forms: integers in [from, from + range); range 0 means all 64 bits.
at::Tensor& randomRange(at::Tensor& self, int64_t from, uint64_t range,
                        std::optional<at::Generator> gen) {
  kernels::RandomDesc d;
  d.elems = orderedDesc({self});
  d.kind = RandomKind::Random;
  d.from = from;
  d.range = range;
  launch(d, self, gen);
  return self;
}

// The largest integer random_() may return for this dtype (ATen's rule: 2^mantissa for
// floating types, the type's max for integers).
int64_t randomMax(c10::ScalarType t) {
  switch (t) {
    case at::kFloat: return int64_t{1} << 24;
    case at::kDouble: return int64_t{1} << 53;
    case at::kHalf: return int64_t{1} << 11;
    case at::kBFloat16: return int64_t{1} << 8;
    case at::kBool: return 1;
    case at::kByte: return 255;
    case at::kChar: return 127;
    case at::kShort: return std::numeric_limits<int16_t>::max();
    case at::kInt: return std::numeric_limits<int32_t>::max();
    default: return std::numeric_limits<int64_t>::max();
  }
}

struct Random {
  static bool native(at::Tensor& self, std::optional<at::Generator>) {
    return kernelSupports(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, std::optional<at::Generator> gen) {
    return randomRange(self, 0, static_cast<uint64_t>(randomMax(self.scalar_type())) + 1, gen);
  }
};

struct RandomTo {
  static bool native(at::Tensor& self, int64_t, std::optional<at::Generator>) {
    return kernelSupports(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
    TORCH_CHECK(0 < to, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
    return randomRange(self, 0, static_cast<uint64_t>(to), gen);
  }
};

struct RandomFrom {
  static bool native(at::Tensor& self, int64_t, std::optional<int64_t>,
                     std::optional<at::Generator>) {
    return kernelSupports(self.scalar_type());
  }
  static at::Tensor& compute(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                             std::optional<at::Generator> gen) {
    if (!to) {
      // [from, max of the dtype]
      const int64_t hi = randomMax(self.scalar_type());
      TORCH_CHECK(from <= hi,
                  "random_ expects 'from' casted to dtype to be less than or equal "
                  "to 'to_inc' casted to dtype, but got from=",
                  from, " > to_inc=", hi);
      return randomRange(self, from, static_cast<uint64_t>(hi - from) + 1, gen);
    }
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    return randomRange(self, from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from), gen);
  }
};

struct NativeDropout {
  static bool native(const at::Tensor& input, double, std::optional<bool>) {
    return floating(input);
  }
  static std::tuple<at::Tensor, at::Tensor> compute(const at::Tensor& input, double p,
                                                    std::optional<bool> train) {
    TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
    at::Tensor mask = at::empty(input.sizes(), input.options().dtype(at::kBool));
    if (train.has_value() && !*train) {  // evaluation, as on CPU: out = input, mask all true
      mask.fill_(true);
      return {input.clone(), mask};
    }
    at::Tensor out = at::empty(input.sizes(), input.options());
    kernels::RandomDesc d;
    d.elems = orderedDesc({out, mask, input});
    d.kind = RandomKind::Dropout;
    d.a = 1.0 - p;                         // keep probability
    d.b = p == 1 ? 0.0 : 1.0 / (1.0 - p);  // scale
    launch(d, out, std::nullopt);
    return {out, mask};
  }
};

// randperm as CUDA computes it: a random 63-bit key per position, the permutation the order
// that sorts them (a tie, one in 2^63 per pair, only keeps two positions in order).
struct RandpermOut {
  static bool native(int64_t, std::optional<at::Generator>, at::Tensor& out) {
    return c10::isIntegralType(out.scalar_type(), false);
  }
  static at::Tensor& compute(int64_t n, std::optional<at::Generator> gen, at::Tensor& out) {
    TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
    TORCH_CHECK(n - 1 <= randomMax(out.scalar_type()), "randperm of ", n,
                " elements does not fit the output's dtype ", out.scalar_type());
    at::native::resize_output(out, {n});
    if (n == 0) return out;
    at::Tensor keys = at::empty({n}, out.options().dtype(at::kLong));
    randomRange(keys, 0, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1, gen);
    return out.copy_(at::argsort(keys));
  }
};

// A new tensor of params' shape whose elements are drawn from their parameters (`params`, and
// `second` for binomial's probabilities, broadcast to it).
at::Tensor drawByRejection(RandomKind kind, const char* name, const at::Tensor& params,
                           const at::Tensor* second, std::optional<at::Generator> gen) {
  TORCH_CHECK_NOT_IMPLEMENTED(floating(params), "\"", name, "_accel\" not implemented for '",
                              params.scalar_type(), "'");
  at::Tensor out = at::empty_like(params, at::MemoryFormat::Contiguous);
  kernels::RandomDesc d;
  d.kind = kind;
  if (second != nullptr) {
    TORCH_CHECK(second->scalar_type() == params.scalar_type(), name,
                ": expected the same dtype for count and prob, got ", params.scalar_type(), " and ",
                second->scalar_type());
    d.elems = orderedDesc({out, params, second->expand_as(params)});
  } else {
    d.elems = orderedDesc({out, params});
  }
  // The smallest normal number of the output's dtype: gamma draws never go below it.
  d.b = floatingLimit(params.scalar_type(),
                      [](auto x) { return std::numeric_limits<decltype(x)>::min(); });
  launch(d, out, gen);
  return out;
}

at::Tensor standardGamma(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  return drawByRejection(RandomKind::Gamma, "gamma", alpha, nullptr, gen);
}

at::Tensor sampleDirichlet(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  const at::Tensor gamma = drawByRejection(RandomKind::Gamma, "dirichlet", alpha, nullptr, gen);
  return at::div(gamma, gamma.sum(-1, /*keepdim=*/true));
}

at::Tensor poisson(const at::Tensor& rate, std::optional<at::Generator> gen) {
  // CPU's check (it reads the rates back, as CPU's does).
  TORCH_CHECK(rate.numel() == 0 || rate.ge(0).all().item<bool>(),
              "invalid Poisson rate, expected rate to be non-negative");
  return drawByRejection(RandomKind::Poisson, "poisson", rate, nullptr, gen);
}

at::Tensor binomial(const at::Tensor& count, const at::Tensor& prob,
                    std::optional<at::Generator> gen) {
  return drawByRejection(RandomKind::Binomial, "binomial", count, &prob, gen);
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  // Two native multiplies; the product stays in grad's dtype.
  return at::mul(at::mul(grad, mask), scale);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerNative<Uniform>(m, "uniform_");
  registerNative<Normal>(m, "normal_");
  registerNative<BernoulliFloat>(m, "bernoulli_.float");
  registerNative<BernoulliTensor>(m, "bernoulli_.Tensor");
  registerNative<Bernoulli>(m, "bernoulli");
  registerNative<Random>(m, "random_");
  registerNative<RandomTo>(m, "random_.to");
  registerNative<RandomFrom>(m, "random_.from");
  registerNative<NativeDropout>(m, "native_dropout");
  registerNative<Exponential>(m, "exponential_");
  registerNative<Cauchy>(m, "cauchy_");
  registerNative<RandpermOut>(m, "randperm.generator_out");
  m.impl("native_dropout_backward", native_dropout_backward);
  m.impl("_standard_gamma", standardGamma);
  m.impl("_sample_dirichlet", sampleDirichlet);
  m.impl("poisson", poisson);
  m.impl("binomial", binomial);
  m.impl("normal.Tensor_float", normalTensorFloat);
  m.impl("normal.Tensor_float_out", normalTensorFloatOut);
  m.impl("normal.float_Tensor", normalFloatTensor);
  m.impl("normal.float_Tensor_out", normalFloatTensorOut);
  m.impl("normal.Tensor_Tensor", normalTensorTensor);
  m.impl("normal.Tensor_Tensor_out", normalTensorTensorOut);
}

}  // namespace
}  // namespace accel
