// The kernels' complex number: two components of R (float, double, or c10::Half as storage
// only), laid out like c10::complex<R> (real then imaginary), usable on host and device.
// Add, sub and mul are the plain IEEE formulas c10::complex uses, so they round the same;
// division scales by the larger component of the divisor (Smith's method) so that it does not
// overflow where the quotient does not. The transcendental functions are built from the real
// ones and match CPU to within the tolerances of torch.testing.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/macros.h"

namespace accel::kernels {

template <class R>
struct Complex {
  R re, im;
  Complex() = default;
  ACCEL_HD constexpr Complex(R r, R i = R(0)) : re(r), im(i) {}
};

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<Complex<R>> : std::true_type {
  using value_type = R;
};
template <class T>
constexpr bool isComplexScalar = IsComplex<T>::value;

template <class R>
ACCEL_HD inline Complex<R> operator+(Complex<R> a, Complex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
ACCEL_HD inline Complex<R> operator-(Complex<R> a, Complex<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class R>
ACCEL_HD inline Complex<R> operator-(Complex<R> a) {
  return {-a.re, -a.im};
}
template <class R>
ACCEL_HD inline Complex<R> operator*(Complex<R> a, Complex<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R>
ACCEL_HD inline Complex<R> operator/(Complex<R> a, Complex<R> b) {
  const R ac = std::fabs(b.re), ad = std::fabs(b.im);
  if (ac >= ad) {
    if (ac == R(0) && ad == R(0)) return {a.re / ac, a.im / ad};  // inf or nan, as CPU gives
    const R rat = b.im / b.re, scl = R(1) / (b.re + b.im * rat);
    return {(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
  }
  const R rat = b.re / b.im, scl = R(1) / (b.im + b.re * rat);
  return {(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
}
template <class R>
ACCEL_HD inline bool operator==(Complex<R> a, Complex<R> b) {
  return a.re == b.re && a.im == b.im;
}
template <class R>
ACCEL_HD inline bool operator!=(Complex<R> a, Complex<R> b) {
  return !(a == b);
}

// The functions torch defines on complex inputs, in the names of the real ones.
template <class R>
ACCEL_HD inline R cabs(Complex<R> z) {
  return std::hypot(z.re, z.im);
}
template <class R>
ACCEL_HD inline R carg(Complex<R> z) {
  return std::atan2(z.im, z.re);
}
template <class R>
ACCEL_HD inline Complex<R> cconj(Complex<R> z) {
  return {z.re, -z.im};
}
// z / |z|, and 0 for 0 (torch.sgn).
template <class R>
ACCEL_HD inline Complex<R> csgn(Complex<R> z) {
  if (z.re == R(0) && z.im == R(0)) return {R(0), R(0)};
  const R a = cabs(z);
  return {z.re / a, z.im / a};
}
// exp(re) (cos im + i sin im); a zero imaginary part stays exact (exp(inf + 0j) = inf + 0j).
template <class R>
ACCEL_HD inline Complex<R> cexp(Complex<R> z) {
  const R e = std::exp(z.re);
  if (z.im == R(0)) return {e, z.im};
  return {e * std::cos(z.im), e * std::sin(z.im)};
}
template <class R>
ACCEL_HD inline Complex<R> clog(Complex<R> z) {
  return {std::log(cabs(z)), carg(z)};
}
// The principal root, from |z| without cancellation: t = sqrt((|re| + |z|) / 2).
template <class R>
ACCEL_HD inline Complex<R> csqrt(Complex<R> z) {
  if (z.re == R(0) && z.im == R(0)) return {R(0), z.im};
  if (std::isinf(z.im)) return {R(INFINITY), z.im};
  const R t = std::sqrt((std::fabs(z.re) + cabs(z)) * R(0.5));
  if (z.re >= R(0)) return {t, z.im / (R(2) * t)};
  return {std::fabs(z.im) / (R(2) * t), std::copysign(t, z.im)};
}
template <class R>
ACCEL_HD inline Complex<R> csin(Complex<R> z) {
  return {std::sin(z.re) * std::cosh(z.im), std::cos(z.re) * std::sinh(z.im)};
}
template <class R>
ACCEL_HD inline Complex<R> ccos(Complex<R> z) {
  return {std::cos(z.re) * std::cosh(z.im), -std::sin(z.re) * std::sinh(z.im)};
}
// tanh(a + bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b); for large |a| it is sign(a) + 0i
// to working precision, which also keeps cosh from overflowing.
template <class R>
ACCEL_HD inline Complex<R> ctanh(Complex<R> z) {
  if (std::fabs(z.re) > R(20)) return {std::copysign(R(1), z.re), std::copysign(R(0), z.im)};
  const R d = std::cosh(R(2) * z.re) + std::cos(R(2) * z.im);
  return {std::sinh(R(2) * z.re) / d, std::sin(R(2) * z.im) / d};
}

}  // namespace accel::kernels
