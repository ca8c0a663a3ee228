// The orthogonal polynomials of degree n of torch.special (Chebyshev T, U, V, W, Hermite H and
// He, Laguerre L, Legendre P; the shifted Chebyshev ones are these at 2x - 1), in T.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/macros.h"

namespace accel::kernels {

// The orthogonal polynomials of degree n (a negative degree gives 0), by their three-term
// recurrences, in T; Chebyshev's of high degree inside (-1, 1) by their trigonometric forms,
// and the values at +-1 in closed form, as ATen evaluates them.
enum class Polynomial {
  ChebyshevT,
  ChebyshevU,
  ChebyshevV,
  ChebyshevW,
  HermiteH,
  HermiteHe,
  LaguerreL,
  LegendreP
};

template <class T>
ACCEL_HD inline T chebyshev(Polynomial kind, T x, int64_t n) {
  if (n < 0) return T(0);
  const bool odd = n % 2 != 0;
  const T two_n1 = T(n + n + 1);
  if (std::fabs(x) == T(1)) {
    switch (kind) {
      case Polynomial::ChebyshevT: return x > T(0) || !odd ? T(1) : T(-1);
      case Polynomial::ChebyshevU: return x > T(0) || !odd ? T(n + 1) : -T(n + 1);
      case Polynomial::ChebyshevV: return x > T(0) ? T(1) : (odd ? -two_n1 : two_n1);
      default: return x > T(0) ? two_n1 : (odd ? T(-1) : T(1));  // W
    }
  }
  if (std::fabs(x) < T(1) && n > (kind == Polynomial::ChebyshevT ? 6 : 8)) {
    const T theta = std::acos(x);
    switch (kind) {
      case Polynomial::ChebyshevT: return std::cos(T(n) * theta);
      case Polynomial::ChebyshevU:
        if (std::sin(theta) != T(0)) return std::sin(T(n + 1) * theta) / std::sin(theta);
        return T(n + 1) * std::cos(T(n + 1) * theta) / x;
      case Polynomial::ChebyshevV:
        if (std::sin(theta / T(2)) != T(1))
          return std::cos((T(n) + T(0.5)) * theta) / std::cos(theta / T(2));
        return odd ? -two_n1 : two_n1;
      default:
        if (std::cos(theta / T(2)) != T(1))
          return std::sin((T(n) + T(0.5)) * theta) / std::sin(theta / T(2));
        return x > T(0) ? two_n1 : (odd ? T(-1) : T(1));
    }
  }
  // Degree 1: T = x, U = 2x, V = 2x - 1, W = 2x + 1; then p_{k+1} = 2x p_k - p_{k-1}.
  T q = kind == Polynomial::ChebyshevT   ? x
        : kind == Polynomial::ChebyshevU ? x + x
        : kind == Polynomial::ChebyshevV ? x + x - T(1)
                                         : x + x + T(1);
  if (n == 0) return T(1);
  T p = T(1);
  for (int64_t k = 2; k <= n; ++k) {
    const T r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}

template <class T>
ACCEL_HD inline T orthogonalPolynomial(Polynomial kind, T x, int64_t n) {
  switch (kind) {
    case Polynomial::HermiteH:
    case Polynomial::HermiteHe:
    case Polynomial::LaguerreL:
    case Polynomial::LegendreP: break;
    default: return chebyshev(kind, x, n);
  }
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (kind == Polynomial::LaguerreL && x == T(0)) return T(1);
  if (kind == Polynomial::LegendreP && std::fabs(x) == T(1))
    return x > T(0) || n % 2 == 0 ? T(1) : T(-1);
  T p = T(1), q;
  switch (kind) {
    case Polynomial::HermiteH: q = x + x; break;
    case Polynomial::LaguerreL: q = T(1) - x; break;
    default: q = x; break;  // He, P
  }
  for (int64_t k = 1; k < n; ++k) {
    const T kk = T(k);
    T r;
    switch (kind) {
      case Polynomial::HermiteH: r = (x + x) * q - (kk + kk) * p; break;
      case Polynomial::HermiteHe: r = x * q - kk * p; break;
      case Polynomial::LaguerreL: r = ((kk + kk + (T(1) - x)) * q - kk * p) / (kk + T(1)); break;
      default: r = ((kk + kk + T(1)) * x * q - kk * p) / (kk + T(1)); break;  // P
    }
    p = q;
    q = r;
  }
  return q;
}

}  // namespace accel::kernels
