// torch.fft and torch.stft/istft on accel: _fft_c2c, _fft_r2c and _fft_c2r, composed of native
// complex ops (cuFFT is not among our packages). A length whose prime factors are all small
// runs mixed-radix decimation-in-time passes over the whole batch: the pass of radix r joins
// the r interleaved length-m transforms of every length-rm subsequence, a twiddle multiply and
// one r x r DFT-matrix product (a GEMM) per pass. Any other length runs Bluestein's chirp-z
// algorithm as a convolution through power-of-two transforms. Transforms, twiddles and chirps
// are computed in double. float and double (complex64 and complex128), as CPU.
#include <ATen/Context.h>
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/conj_physical.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/real.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// A pass's DFT-matrix product is r^2 work per element: larger prime factors go to Bluestein.
constexpr int64_t kMaxRadix = 64;

// exp(-2 pi i * turns) for a float64 `turns` tensor, in the complex dtype `type`.
Tensor unitPhase(const Tensor& turns, at::ScalarType type) {
  const Tensor a = turns * (-2 * M_PI);
  return at::complex(a.cos(), a.sin()).to(type);
}

// n's radices, fours first, or none when a prime factor exceeds kMaxRadix.
std::vector<int64_t> radices(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t r : {4, 2}) {
    while (n % r == 0) {
      out.push_back(r);
      n /= r;
    }
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) out.push_back(n);
  for (int64_t r : out) {
    if (r > kMaxRadix) return {};
  }
  return out;
}

// The forward DFT of `x` (complex, contiguous) along its last dimension, of length the product
// of `factors`.
Tensor dftMixedRadix(const Tensor& x, const std::vector<int64_t>& factors) {
  const int64_t n = x.size(-1);
  const at::TensorOptions real = x.options().dtype(at::kDouble);
  const at::ScalarType type = x.scalar_type();
  // [batch, offsets, m]: row s holds the length-m transform of x[s::offsets].
  Tensor y = x.reshape({-1, n, 1});
  const int64_t batch = y.size(0);
  for (int64_t r : factors) {
    const int64_t stride = y.size(1) / r, m = y.size(2);
    // Row s + q * stride is the q-th interleaved part of new subsequence s: group q first.
    const Tensor q = at::arange(r, real).view({r, 1, 1, 1});
    const Tensor k = at::arange(m, real).view({1, 1, 1, m});
    const Tensor parts = y.view({batch, r, stride, m}).permute({1, 0, 2, 3}) *
                         unitPhase(q * k / static_cast<double>(r * m), type);
    const Tensor qj = at::arange(r, real);
    const Tensor dft = unitPhase(qj.unsqueeze(1) * qj.unsqueeze(0) / static_cast<double>(r), type);
    // [j, (batch, stride, k)] -> [batch, stride, j * m + k]
    y = at::mm(dft, parts.reshape({r, -1}))
            .view({r, batch, stride, m})
            .permute({1, 2, 0, 3})
            .reshape({batch, stride, r * m});
  }
  return y.view(x.sizes());
}

// Bluestein: X_k = c_k * sum_j (x_j c_j) conj(c_(k-j)) with the chirp c_j = exp(-i pi j^2 / n),
// the sum a circular convolution of power-of-two length m >= 2n - 1.
Tensor dftBluestein(const Tensor& x) {
  const int64_t n = x.size(-1);
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  const std::vector<int64_t> factors = radices(m);
  const at::TensorOptions index = x.options().dtype(at::kLong);
  // j^2 mod 2n keeps the chirp's angle exact in double for long signals.
  const Tensor j = at::arange(n, index);
  const Tensor chirp =
      unitPhase((j * j).remainder(2 * n).to(at::kDouble) / (2.0 * n), x.scalar_type());
  const Tensor a = at::constant_pad_nd(x * chirp, {0, m - n});
  const Tensor back = at::conj_physical(chirp);
  const Tensor kernel =
      at::cat({back, at::zeros({m - 2 * n + 1}, back.options()), back.narrow(0, 1, n - 1).flip(0)});
  const Tensor spectrum = dftMixedRadix(a, factors) * dftMixedRadix(kernel, factors);
  // The inverse transform as conj(DFT(conj(.))) / m.
  const Tensor conv = at::conj_physical(dftMixedRadix(at::conj_physical(spectrum), factors)) / m;
  return conv.narrow(-1, 0, n) * chirp;
}

Tensor dftLastDim(const Tensor& x, bool forward) {
  const int64_t n = x.size(-1);
  if (n <= 1 || x.numel() == 0) return x.clone();
  const Tensor in = forward ? x.contiguous() : at::conj_physical(x).contiguous();
  const std::vector<int64_t> factors = radices(n);
  const Tensor out = factors.empty() ? dftBluestein(in) : dftMixedRadix(in, factors);
  return forward ? out : at::conj_physical(out);
}

// The DFT over `dims`, each in turn as the last dimension. complex64 is transformed in double
// precision and rounded once: float twiddles and passes lost to CPU's pocketfft by up to 3x.
Tensor dftAlong(const Tensor& x, at::IntArrayRef dims, bool forward) {
  Tensor y = x.scalar_type() == at::kComplexFloat ? x.to(at::kComplexDouble) : x;
  for (int64_t d : dims) y = dftLastDim(y.movedim(d, -1), forward).movedim(-1, d);
  return y.to(x.scalar_type());
}

// fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the signal's size over `dims`.
Tensor normalized(const Tensor& x, int64_t normalization, double n) {
  if (normalization == 1) return x / std::sqrt(n);
  if (normalization == 2) return x / n;
  return x;
}

std::vector<int64_t> wrapped(at::IntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(c10::maybe_wrap_dim(d, ndim));
  return out;
}

double signalSize(const Tensor& x, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(x.size(d));
  return n;
}

// The layout CPU gives a transform's output, which the meta functions predict for accel too
// (_exec_fft in torch/_meta_registrations.py) and compiled code asserts: the other dims
// outermost, ordered by `inputStrides` (largest first, ties in order), then `dims` in order.
std::vector<int64_t> fftStrides(at::IntArrayRef inputStrides, at::IntArrayRef outSizes,
                                const std::vector<int64_t>& dims) {
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < static_cast<int64_t>(outSizes.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) batch.push_back(d);
  std::stable_sort(batch.begin(), batch.end(),
                   [&](int64_t a, int64_t b) { return inputStrides[a] > inputStrides[b]; });
  std::vector<int64_t> strides(outSizes.size());
  int64_t next = 1;
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    strides[*d] = next;
    next *= std::max<int64_t>(outSizes[*d], 1);
  }
  for (auto d = batch.rbegin(); d != batch.rend(); ++d) {
    strides[*d] = next;
    next *= outSizes[*d];
  }
  return strides;
}

// `dims` (but the last where excludeLast) by the input's strides, largest first (_sort_dims).
std::vector<int64_t> byStride(at::IntArrayRef strides, std::vector<int64_t> dims,
                              bool excludeLast) {
  std::stable_sort(dims.begin(), dims.end() - (excludeLast && !dims.empty() ? 1 : 0),
                   [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  return dims;
}

Tensor withStrides(const Tensor& x, const std::vector<int64_t>& strides) {
  if (x.strides() == at::IntArrayRef(strides)) return x;
  return at::empty_strided(x.sizes(), strides, x.options()).copy_(x);
}

bool complexNative(const Tensor& x) {
  return x.scalar_type() == at::kComplexFloat || x.scalar_type() == at::kComplexDouble;
}

struct FftC2C {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, c10::SymIntArrayRef, int64_t, bool) {
    return complexNative(self);
  }
  static Tensor compute(const Tensor& self, c10::SymIntArrayRef dim, int64_t normalization,
                        bool forward, const Output& out) {
    const std::vector<int64_t> dims = wrapped(C10_AS_INTARRAYREF_SLOW(dim), self.dim());
    if (dims.empty()) return into(out, self.clone());
    const Tensor result = dftAlong(self, dims, forward);
    const std::vector<int64_t> strides =
        fftStrides(self.strides(), self.sizes(), byStride(self.strides(), dims, false));
    return into(out,
                withStrides(normalized(result, normalization, signalSize(self, dims)), strides));
  }
};

struct FftR2C {
  static constexpr bool kComplex = true;
  static bool native(const Tensor& self, at::IntArrayRef, int64_t, bool) {
    return self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble;
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool onesided, const Output& out) {
    const std::vector<int64_t> dims = wrapped(dim, self.dim());
    Tensor result = dftAlong(self.to(c10::toComplexType(self.scalar_type())), dims, true);
    if (onesided && !dims.empty()) {
      const int64_t last = dims.back();
      result = result.narrow(last, 0, self.size(last) / 2 + 1);
    }
    result = normalized(result, normalization, signalSize(self, dims));
    // Without MKL, CPU and the meta function give a contiguous output.
    if (!at::hasMKL()) return into(out, result.contiguous());
    const std::vector<int64_t> order = byStride(self.strides(), dims, true);
    return into(out, withStrides(result, fftStrides(self.strides(), result.sizes(), order)));
  }
};

// The inverse of a onesided transform: the other dims first, then the last dim's full
// Hermitian spectrum, X_(n-k) = conj(X_k), whose inverse is real.
struct FftC2R {
  static bool native(const Tensor& self, at::IntArrayRef, int64_t, c10::SymInt) {
    return complexNative(self);
  }
  static Tensor compute(const Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        c10::SymInt last_dim_size, const Output& out) {
    const std::vector<int64_t> dims = wrapped(dim, self.dim());
    TORCH_CHECK(!dims.empty(), "_fft_c2r: at least one dimension is needed");
    const int64_t last = dims.back(), n = last_dim_size.expect_int();
    TORCH_CHECK(n >= 1, "Invalid number of data points (", n, ") specified");
    const bool single = self.scalar_type() == at::kComplexFloat;
    Tensor x = dftAlong(single ? self.to(at::kComplexDouble) : self,
                        std::vector<int64_t>(dims.begin(), dims.end() - 1), false);
    x = x.movedim(last, -1).narrow(-1, 0, std::min<int64_t>(x.size(last), n / 2 + 1));
    const int64_t mirrored = n - x.size(-1);
    if (mirrored > 0) x = at::cat({x, at::conj_physical(x.narrow(-1, 1, mirrored).flip(-1))}, -1);
    Tensor result = at::real(dftLastDim(x, false)).movedim(-1, last);
    if (single) result = result.to(at::kFloat);
    std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
    shape[last] = n;
    double size = static_cast<double>(n);
    for (auto it = dims.begin(); it != dims.end() - 1; ++it)
      size *= static_cast<double>(shape[*it]);
    result = normalized(result, normalization, size);
    if (!at::hasMKL()) return into(out, result.contiguous());
    // CPU's last step transforms the other dims' output, laid out as _fft_c2c's.
    const std::vector<int64_t> others(dims.begin(), dims.end() - 1);
    const std::vector<int64_t> inner =
        others.empty()
            ? self.strides().vec()
            : fftStrides(self.strides(), self.sizes(), byStride(self.strides(), others, false));
    return into(out, withStrides(result, fftStrides(inner, shape, {last})));
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<FftC2C>(m, "_fft_c2c", nullptr, "_fft_c2c.out");
  registerForms<FftR2C>(m, "_fft_r2c", nullptr, "_fft_r2c.out");
  registerForms<FftC2R>(m, "_fft_c2r", nullptr, "_fft_c2r.out");
}

}  // namespace
}  // namespace accel
