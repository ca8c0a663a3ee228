// torch.fft and torch.stft/istft on accel: _fft_c2c, _fft_r2c and _fft_c2r, composed of native
// complex ops (cuFFT is not among our packages). A power-of-two length runs radix-2
// decimation-in-time passes over the whole batch: pass m joins the length-m transforms of the
// two interleaved halves of every length-2m subsequence, E + w^k O and E - w^k O, one complex
// multiply, add, subtract and concatenation per pass. Any other length runs Bluestein's
// chirp-z algorithm as a convolution through power-of-two transforms. Transforms, twiddles and
// chirps are
// computed in double. float and double (complex64 and complex128), as CPU.
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/conj_physical.h>
#include <ATen/ops/real.h>
#include <ATen/ops/zeros.h>
#include <c10/util/complex.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "aten/op_forms.h"

namespace accel {
namespace {

using at::Tensor;

// exp(sign * i * pi * angle) for a float64 `angle` tensor, in the complex dtype `type`.
Tensor unitPhase(const Tensor& angle, double sign, at::ScalarType type) {
  const Tensor a = angle * (sign * M_PI);
  return at::complex(a.cos(), a.sin()).to(type);
}

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The forward DFT of `x` (complex, contiguous) along its last dimension, a power of two long.
Tensor dftPowerOfTwo(const Tensor& x) {
  const int64_t n = x.size(-1);
  const at::TensorOptions real = x.options().dtype(at::kDouble);
  // [batch, offsets, m]: row r holds the length-m transform of x[r::n/m].
  Tensor y = x.reshape({-1, n, 1});
  for (int64_t m = 1; m < n; m *= 2) {
    const int64_t half = y.size(1) / 2;
    const Tensor even = y.narrow(1, 0, half);
    const Tensor odd = y.narrow(1, half, half) *
                       unitPhase(at::arange(m, real) / static_cast<double>(m), -1, x.scalar_type());
    y = at::cat({even + odd, even - odd}, 2);
  }
  return y.view(x.sizes());
}

// Bluestein: X_k = c_k * sum_j (x_j c_j) conj(c_(k-j)) with the chirp c_j = exp(-i pi j^2 / n),
// the sum a circular convolution of power-of-two length m >= 2n - 1.
Tensor dftBluestein(const Tensor& x) {
  const int64_t n = x.size(-1);
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  const at::TensorOptions index = x.options().dtype(at::kLong);
  // j^2 mod 2n keeps the chirp's angle exact in double for long signals.
  const Tensor j = at::arange(n, index);
  const Tensor chirp = unitPhase((j * j).remainder(2 * n).to(at::kDouble) / static_cast<double>(n),
                                 -1, x.scalar_type());
  const Tensor a = at::constant_pad_nd(x * chirp, {0, m - n});
  const Tensor back = at::conj_physical(chirp);
  const Tensor kernel =
      at::cat({back, at::zeros({m - 2 * n + 1}, back.options()), back.narrow(0, 1, n - 1).flip(0)});
  const Tensor spectrum = dftPowerOfTwo(a) * dftPowerOfTwo(kernel);
  // The inverse transform as conj(DFT(conj(.))) / m.
  const Tensor conv = at::conj_physical(dftPowerOfTwo(at::conj_physical(spectrum))) / m;
  return conv.narrow(-1, 0, n) * chirp;
}

Tensor dftLastDim(const Tensor& x, bool forward) {
  const int64_t n = x.size(-1);
  if (n <= 1 || x.numel() == 0) return x.clone();
  const Tensor in = forward ? x.contiguous() : at::conj_physical(x).contiguous();
  const Tensor out = isPowerOfTwo(n) ? dftPowerOfTwo(in) : dftBluestein(in);
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
    const Tensor result = dftAlong(self, dims, forward);
    return into(out, normalized(result, normalization, signalSize(self, dims)));
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
    return into(out, normalized(result, normalization, signalSize(self, dims)));
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
    return into(out, normalized(result, normalization, size).contiguous());
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  registerForms<FftC2C>(m, "_fft_c2c", nullptr, "_fft_c2c.out");
  registerForms<FftR2C>(m, "_fft_r2c", nullptr, "_fft_r2c.out");
  registerForms<FftC2R>(m, "_fft_c2r", nullptr, "_fft_c2r.out");
}

}  // namespace
}  // namespace accel
