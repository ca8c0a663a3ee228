// The im2col family: a convolution's input windows as GEMM columns (im2col), and its inverse,
// the image that sums every column entry back at its window position (col2im, the input
// gradient of im2col). 1-D and 2-D problems are 3-D ones with leading spatial sizes of 1.
//
// The image is [N, C, *in] with any element strides (a channels-last input needs no copy);
// the columns are contiguous [N, C * prod(kernel), prod(out)], rows ordered (c, *kernel), which
// is [N, G, C/G * prod(kernel), L] for any groups G: each group's weight [OC/G, C/G * K] times
// its columns gives the output [OC/G, L] in NCHW order, with no transpose.
//
// Both functors handle a range [begin, end) of one row of their output (a row: an image plane
// or a kernel offset's output plane), so the host runs whole rows in vectorisable loops and
// CUDA runs a thread per element. col2im is a gather, each image element summing its window
// entries in a fixed order: deterministic, no atomics, the same numbers on both drivers.
#pragma once

#include <type_traits>

#include "kernels/dtype.h"

namespace accel::kernels {

constexpr int kMaxIm2colDims = 3;

struct Im2colDesc {
  DType dtype = DType::Float;  // Half, BFloat16, Float or Double
  int64_t batch = 0, channels = 0;
  // Spatial geometry, outermost first, padded at the front with 1 (stride 1, padding 0).
  int64_t in[kMaxIm2colDims] = {1, 1, 1}, out[kMaxIm2colDims] = {1, 1, 1},
          kernel[kMaxIm2colDims] = {1, 1, 1}, stride[kMaxIm2colDims] = {1, 1, 1},
          padding[kMaxIm2colDims] = {}, dilation[kMaxIm2colDims] = {1, 1, 1};
  // The image: im2col reads it, col2im writes it. Element strides of N, C and the spatial
  // dimensions.
  char* image = nullptr;
  int64_t image_strides[2 + kMaxIm2colDims] = {};
  char* columns = nullptr;  // im2col writes it, col2im reads it

  ACCEL_HD int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  ACCEL_HD int64_t positions() const { return out[0] * out[1] * out[2]; }  // L
  // im2col: rows (n, c, *kernel, out[0]) of out[1] * out[2] column entries.
  ACCEL_HD int64_t columnRows() const { return batch * channels * kernelSize() * out[0]; }
  ACCEL_HD int64_t columnRowWidth() const { return out[1] * out[2]; }
  // col2im: rows (n, c, in[0]) of in[1] * in[2] image elements.
  ACCEL_HD int64_t imageRows() const { return batch * channels * in[0]; }
  ACCEL_HD int64_t imageRowWidth() const { return in[1] * in[2]; }
  // Whether a window step moves one element along the last two dimensions, whose image lines
  // are dense and back to back, and a column line is as long as an image line: then a column
  // row is a shifted copy of an image plane.
  ACCEL_HD bool denseShift() const {
    return stride[1] == 1 && stride[2] == 1 && out[2] == in[2] && image_strides[4] == 1 &&
           image_strides[3] == in[2];
  }
};

// The first j in [lo, hi) for which j * step + shift lands in [0, size), and the end of that
// range; j * step + shift is an input position of output position j.
ACCEL_HD inline void validRange(int64_t size, int64_t step, int64_t shift, int64_t* lo,
                                int64_t* hi) {
  const int64_t first = shift >= 0 ? 0 : (-shift + step - 1) / step;
  const int64_t last = size - shift <= 0 ? 0 : (size - shift + step - 1) / step;
  *lo = first > *lo ? first : *lo;
  *hi = last < *hi ? last : *hi;
  if (*hi < *lo) *hi = *lo;
}

template <class T>
struct Im2colOp {
  Im2colDesc d;

  // A whole row when denseShift(): its out[1] x out[2] plane is the input plane (src, or none
  // when the kernel offset's plane is padding) shifted by shift1 lines and shift2 columns, so
  // one contiguous copy moves it, then the lines and columns that fall in the padding are
  // zeroed (the copy put neighbouring rows' elements in those columns).
  ACCEL_HD void shiftedPlane(T* dst, const T* src, int64_t shift1, int64_t shift2, int64_t lo,
                             int64_t hi) const {
    const int64_t w = d.out[2], lines = d.out[1];
    // The lines whose input line o1 + shift1 exists: [p, q).
    int64_t p = src && shift1 < 0 ? -shift1 : 0;
    int64_t q = src ? d.in[1] - shift1 : 0;
    if (q > lines) q = lines;
    if (p > lines) p = lines;
    if (q < p) q = p;
    const int64_t off = shift1 * w + shift2;  // dst[e] = src[e + off] inside the plane
    int64_t e0 = p * w, e1 = q * w;
    if (e0 < -off) e0 = -off;
    if (e1 > d.in[1] * w - off) e1 = d.in[1] * w - off;
    for (int64_t e = 0; e < p * w; ++e) dst[e] = T(0);
    for (int64_t e = e0; e < e1; ++e) dst[e] = src[e + off];
    for (int64_t e = q * w; e < lines * w; ++e) dst[e] = T(0);
    for (int64_t o1 = p; o1 < q; ++o1) {
      T* line = dst + o1 * w;
      for (int64_t j = 0; j < lo && j < w; ++j) line[j] = T(0);
      for (int64_t j = hi > 0 ? hi : 0; j < w; ++j) line[j] = T(0);
    }
  }

  // Column entries [begin, end) of row r.
  ACCEL_HD void operator()(int64_t r, int64_t begin, int64_t end) const {
    T* dst = reinterpret_cast<T*>(d.columns) + r * d.columnRowWidth();
    const int64_t o0 = r % d.out[0];
    r /= d.out[0];
    int64_t k[kMaxIm2colDims];
    for (int i = kMaxIm2colDims - 1; i >= 0; --i) {
      k[i] = r % d.kernel[i];
      r /= d.kernel[i];
    }
    const int64_t c = r % d.channels, n = r / d.channels;
    const int64_t i0 = o0 * d.stride[0] - d.padding[0] + k[0] * d.dilation[0];
    const int64_t* s = d.image_strides;
    const bool plane_in = i0 >= 0 && i0 < d.in[0];
    const T* src =
        reinterpret_cast<const T*>(d.image) + (plane_in ? n * s[0] + c * s[1] + i0 * s[2] : 0);
    const int64_t shift1 = k[1] * d.dilation[1] - d.padding[1];
    const int64_t shift2 = k[2] * d.dilation[2] - d.padding[2];
    // The columns j of a line whose input position j * stride + shift2 is inside the input row:
    // the same range [lo, hi) for every line, so no division is left in the loops below.
    int64_t lo = 0, hi = d.out[2];
    validRange(d.in[2], d.stride[2], shift2, &lo, &hi);
    if (begin == 0 && end == d.columnRowWidth() && d.denseShift()) {
      shiftedPlane(dst, plane_in ? src : nullptr, shift1, shift2, lo, hi);
      return;
    }
    // Segments of one out[1] line each.
    int64_t o1 = begin / d.out[2], j0 = begin % d.out[2];
    for (int64_t q = begin; q < end; ++o1, j0 = 0) {
      const int64_t j1 = j0 + (end - q < d.out[2] - j0 ? end - q : d.out[2] - j0);
      T* line = dst + o1 * d.out[2];
      const int64_t i1 = o1 * d.stride[1] + shift1;
      // Copied: [a, b); zeros (padding) around it.
      int64_t a = j1, b = j1;
      if (plane_in && i1 >= 0 && i1 < d.in[1]) {
        a = lo < j0 ? j0 : lo < j1 ? lo : j1;
        b = hi < a ? a : hi < j1 ? hi : j1;
      }
      const T* row = src + i1 * s[3];
      int64_t j = j0;
      for (; j < a; ++j) line[j] = T(0);
      if (d.stride[2] == 1 && s[4] == 1) {
        for (; j < b; ++j) line[j] = row[j + shift2];
      } else {
        for (; j < b; ++j) line[j] = row[(j * d.stride[2] + shift2) * s[4]];
      }
      for (; j < j1; ++j) line[j] = T(0);
      q += j1 - j0;
    }
  }
};

// Chunk: how many consecutive image elements one pass accumulates (in registers on CUDA: 1).
template <class T, int Chunk>
struct Col2imOp {
  Im2colDesc d;

  // Image elements j0 .. j0 + m (m <= Chunk) of line i1 of the plane i0 at img, whose column
  // rows start at cols: each the sum over kernel offsets k (in order) of the column entry
  // whose window puts k there.
  ACCEL_HD void segment(T* img, const T* cols, int64_t i0, int64_t i1, int64_t j0,
                        int64_t m) const {
    using A = OpMath<T>;
    const int64_t L = d.positions();
    A acc[Chunk];
    for (int64_t t = 0; t < m; ++t) acc[t] = A(0);
    for (int64_t k0 = 0; k0 < d.kernel[0]; ++k0) {
      const int64_t t0 = i0 + d.padding[0] - k0 * d.dilation[0];
      if (t0 < 0 || t0 % d.stride[0] != 0 || t0 / d.stride[0] >= d.out[0]) continue;
      for (int64_t k1 = 0; k1 < d.kernel[1]; ++k1) {
        const int64_t t1 = i1 + d.padding[1] - k1 * d.dilation[1];
        if (t1 < 0 || t1 % d.stride[1] != 0 || t1 / d.stride[1] >= d.out[1]) continue;
        const T* line = cols + ((k0 * d.kernel[1] + k1) * d.kernel[2]) * L +
                        (t0 / d.stride[0] * d.out[1] + t1 / d.stride[1]) * d.out[2];
        for (int64_t k2 = 0; k2 < d.kernel[2]; ++k2, line += L) {
          // Image element j takes output position (j + shift) / stride when that divides.
          const int64_t shift = d.padding[2] - k2 * d.dilation[2];
          int64_t j = j0, t = j0 + shift;
          if (t < 0) {
            j -= t;
            t = 0;
          }
          if (const int64_t rem = t % d.stride[2]) {
            j += d.stride[2] - rem;
            t += d.stride[2] - rem;
          }
          int64_t o = t / d.stride[2];
          const int64_t stop_o = d.out[2], stop_j = j0 + m;
          if (d.stride[2] == 1) {
            const int64_t count = (stop_j - j < stop_o - o) ? stop_j - j : stop_o - o;
            for (int64_t e = 0; e < count; ++e) acc[j - j0 + e] += castTo<A>(line[o + e]);
          } else {
            for (; j < stop_j && o < stop_o; j += d.stride[2], ++o)
              acc[j - j0] += castTo<A>(line[o]);
          }
        }
      }
    }
    const int64_t* s = d.image_strides;
    T* dst = img + i1 * s[3] + j0 * s[4];
    for (int64_t t = 0; t < m; ++t) dst[t * s[4]] = castTo<T>(acc[t]);
  }

  // A whole plane when denseShift() and the sums are in T itself (float, double): every
  // kernel offset's column plane, shifted, is added to the image plane line by line over the
  // columns its window reaches, in offset order (the order segment() adds in, so the same
  // sums). Each line's run is contiguous on both sides and vectorises.
  ACCEL_HD void shiftedSums(T* img, const T* cols, int64_t i0) const {
    const int64_t w = d.in[2], lines = d.in[1], L = d.positions();
    for (int64_t e = 0; e < lines * w; ++e) img[e] = T(0);
    for (int64_t k0 = 0; k0 < d.kernel[0]; ++k0) {
      const int64_t t0 = i0 + d.padding[0] - k0 * d.dilation[0];
      if (t0 < 0 || t0 % d.stride[0] != 0 || t0 / d.stride[0] >= d.out[0]) continue;
      for (int64_t k1 = 0; k1 < d.kernel[1]; ++k1) {
        // Image line i1 takes column line i1 + shift1: lines [p, q) have one.
        const int64_t shift1 = d.padding[1] - k1 * d.dilation[1];
        int64_t p = 0, q = lines;
        validRange(d.out[1], 1, shift1, &p, &q);
        const T* plane = cols + ((k0 * d.kernel[1] + k1) * d.kernel[2]) * L +
                         t0 / d.stride[0] * d.out[1] * d.out[2];
        for (int64_t k2 = 0; k2 < d.kernel[2]; ++k2, plane += L) {
          // Image column j takes column entry j + shift2: columns [a, b) have one.
          const int64_t shift2 = d.padding[2] - k2 * d.dilation[2];
          int64_t a = 0, b = w;
          validRange(d.out[2], 1, shift2, &a, &b);
          for (int64_t i1 = p; i1 < q; ++i1) {
            T* dst = img + i1 * w;
            const T* src = plane + (i1 + shift1) * w + shift2;
            for (int64_t j = a; j < b; ++j) dst[j] += src[j];
          }
        }
      }
    }
  }

  // Image elements [begin, end) of row r.
  ACCEL_HD void operator()(int64_t r, int64_t begin, int64_t end) const {
    const int64_t i0 = r % d.in[0];
    r /= d.in[0];
    const int64_t c = r % d.channels, n = r / d.channels;
    const int64_t* s = d.image_strides;
    T* img = reinterpret_cast<T*>(d.image) + n * s[0] + c * s[1] + i0 * s[2];
    const T* cols = reinterpret_cast<const T*>(d.columns) +
                    (n * d.channels + c) * d.kernelSize() * d.positions();
    if constexpr (std::is_same_v<T, OpMath<T>>) {
      if (begin == 0 && end == d.imageRowWidth() && d.denseShift()) {
        shiftedSums(img, cols, i0);
        return;
      }
    }
    for (int64_t q = begin; q < end;) {
      const int64_t i1 = q / d.in[2], j0 = q % d.in[2];
      const int64_t seg = end - q < d.in[2] - j0 ? end - q : d.in[2] - j0;
      const int64_t m = seg < Chunk ? seg : Chunk;
      segment(img, cols, i0, i1, j0, m);
      q += m;
    }
  }
};

struct Im2colTable {
  rt::Error (*im2col)(const Im2colDesc& d, rt::Stream stream);
  rt::Error (*col2im)(const Im2colDesc& d, rt::Stream stream);
  template <class Exec>
  static Im2colTable make();
};
const Im2colTable& im2colTable();  // the build of the driver in use

// Exec::forRows(rows, width, f, stream) runs f(row, begin, end) over every [rows, width]
// element; Exec::kCol2imChunk is its col2im chunk. Floating dtypes only.
template <class Exec, bool ToColumns>
rt::Error launchWindow(const Im2colDesc& d, rt::Stream stream) {
  if (!isSupported(d.dtype)) return rt::Error::InvalidValue;
  return dispatchDType(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!isFloating<T>) {
      return rt::Error::InvalidValue;
    } else if constexpr (ToColumns) {
      return Exec::forRows(d.columnRows(), d.columnRowWidth(), Im2colOp<T>{d}, stream);
    } else {
      return Exec::forRows(d.imageRows(), d.imageRowWidth(), Col2imOp<T, Exec::kCol2imChunk>{d},
                           stream);
    }
  });
}

template <class Exec>
Im2colTable Im2colTable::make() {
  // The casts let nvcc resolve each function template's address.
  using Entry = decltype(Im2colTable::im2col);
  return {static_cast<Entry>(&launchWindow<Exec, true>),
          static_cast<Entry>(&launchWindow<Exec, false>)};
}

}  // namespace accel::kernels
