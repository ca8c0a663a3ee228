// The indexing and sort families on the host driver, against plain C++ references.
#include <algorithm>
#include <numeric>

#include "kernels/index.h"
#include "kernels/sort.h"
#include "kernels_testing.h"

namespace accel::kernels::testing {
namespace {

class IndexKernelTest : public KernelTest {
 protected:
  template <class T>
  T* upload(const std::vector<T>& v) {
    std::vector<char> bytes(v.size() * sizeof(T));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    char* p = deviceAlloc(bytes.size());
    KernelTest::upload(p, bytes);
    return reinterpret_cast<T*>(p);
  }
  template <class T>
  std::vector<T> read(const T* p, size_t n) {
    std::vector<char> bytes(n * sizeof(T));
    download(bytes, reinterpret_cast<const char*>(p));
    std::vector<T> v(n);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

Operand operand(void* data, DType t, std::vector<int64_t> strides_bytes) {
  Operand op;
  op.data = static_cast<char*>(data);
  op.dtype = t;
  for (size_t i = 0; i < strides_bytes.size(); ++i) op.strides[i] = strides_bytes[i];
  return op;
}

// out[i] = src[idx[i]] over a 1-D iteration (index_select of a vector), int32 indices with
// a negative one (wrapped like advanced indexing).
TEST_F(IndexKernelTest, GatherWithNegativeIndex) {
  float* src = upload<float>({10, 11, 12, 13});
  int32_t* idx = upload<int32_t>({3, 0, -1, 1});
  float* out = upload<float>({0, 0, 0, 0});
  IndexDesc d;
  d.iter.ndim = 1;
  d.iter.sizes[0] = 4;
  d.iter.numel = 4;
  d.iter.noperands = 2;
  d.iter.op[0] = operand(out, DType::Float, {4});
  d.iter.op[1] = operand(src, DType::Float, {0});
  d.indexed_operand = 1;
  d.nindex = 1;
  d.index[0] = operand(idx, DType::Int32, {4});
  d.dim_size[0] = 4;
  d.dim_stride[0] = 4;
  ASSERT_EQ(host::indexTable().index(d, IndexMode::Copy, Scalar{}, stream_), rt::Error::Success);
  EXPECT_EQ(read(out, 4), (std::vector<float>{13, 10, 13, 11}));
}

// dst[idx[i]] += 2 * src[i] with duplicates, then dst[idx[i]] = 5.
TEST_F(IndexKernelTest, AccumulateDuplicatesAndFill) {
  int64_t* dst = upload<int64_t>({0, 0, 0});
  int64_t* src = upload<int64_t>({1, 2, 3, 4, 5});
  int64_t* idx = upload<int64_t>({2, 0, 2, 2, 1});
  IndexDesc d;
  d.iter.ndim = 1;
  d.iter.sizes[0] = 5;
  d.iter.numel = 5;
  d.iter.noperands = 2;
  d.iter.op[0] = operand(dst, DType::Int64, {0});
  d.iter.op[1] = operand(src, DType::Int64, {8});
  d.indexed_operand = 0;
  d.nindex = 1;
  d.index[0] = operand(idx, DType::Int64, {8});
  d.dim_size[0] = 3;
  d.dim_stride[0] = 8;
  ASSERT_EQ(host::indexTable().index(d, IndexMode::Add, Scalar{2, 2, true}, stream_),
            rt::Error::Success);
  EXPECT_EQ(read(dst, 3), (std::vector<int64_t>{4, 10, 16}));
  d.iter.noperands = 1;
  ASSERT_EQ(host::indexTable().index(d, IndexMode::Fill, Scalar{5, 5, true}, stream_),
            rt::Error::Success);
  EXPECT_EQ(read(dst, 3), (std::vector<int64_t>{5, 5, 5}));
}

// An index the aten layer failed to validate is never dereferenced: the host build turns it
// into the stream's sticky error, reported at the next synchronize, and the stream recovers.
TEST_F(IndexKernelTest, OutOfRangeIndexBecomesStickyError) {
  float* dst = upload<float>({1, 2});
  float* src = upload<float>({7});
  int64_t* idx = upload<int64_t>({2});
  IndexDesc d;
  d.iter.ndim = 1;
  d.iter.sizes[0] = 1;
  d.iter.numel = 1;
  d.iter.noperands = 2;
  d.iter.op[0] = operand(dst, DType::Float, {0});
  d.iter.op[1] = operand(src, DType::Float, {4});
  d.indexed_operand = 0;
  d.nindex = 1;
  d.index[0] = operand(idx, DType::Int64, {8});
  d.dim_size[0] = 2;
  d.dim_stride[0] = 4;
  ASSERT_EQ(host::indexTable().index(d, IndexMode::Copy, Scalar{}, stream_), rt::Error::Success);
  EXPECT_EQ(driver_->streamSynchronize(stream_), rt::Error::LaunchFailure);
  EXPECT_EQ(driver_->getLastError(0), rt::Error::LaunchFailure);
  EXPECT_EQ(read(dst, 2), (std::vector<float>{1, 2}));
}

TEST_F(IndexKernelTest, RejectsBadDescriptors) {
  IndexDesc d;
  d.iter.noperands = 2;
  d.iter.op[0].dtype = DType::Float;
  d.iter.op[1].dtype = DType::Half;  // mixed dtypes
  EXPECT_EQ(host::indexTable().index(d, IndexMode::Copy, Scalar{}, stream_),
            rt::Error::InvalidValue);
  d.iter.op[1].dtype = DType::Float;
  d.nindex = 1;
  d.index[0].dtype = DType::Float;  // not an index dtype
  EXPECT_EQ(host::indexTable().index(d, IndexMode::Copy, Scalar{}, stream_),
            rt::Error::InvalidValue);
}

TEST_F(IndexKernelTest, BoundsAndNonzero) {
  int64_t* idx = upload<int64_t>({4, -3, 9, 0});
  int64_t* mm = upload<int64_t>({0, 0});
  ElementwiseDesc d;
  d.ndim = 1;
  d.sizes[0] = 4;
  d.numel = 4;
  d.noperands = 1;
  d.op[0] = operand(idx, DType::Int64, {8});
  auto workspace = [&](const ElementwiseDesc& e) {
    const int64_t bytes = host::indexTable().compact_workspace_bytes(e, stream_);
    EXPECT_GE(bytes, 16);  // one chunk's two partials at least
    return reinterpret_cast<char*>(upload<int64_t>(std::vector<int64_t>(bytes / 8)));
  };
  ASSERT_EQ(host::indexTable().index_bounds(d, mm, workspace(d), stream_), rt::Error::Success);
  EXPECT_EQ(read(mm, 2), (std::vector<int64_t>{-3, 9}));

  // A 2x3 bool mask, row-major.
  uint8_t* mask = upload<uint8_t>({0, 1, 0, 1, 1, 0});  // bools stored as bytes
  ElementwiseDesc m;
  m.ndim = 2;
  m.sizes[0] = 2;
  m.sizes[1] = 3;
  m.numel = 6;
  m.noperands = 1;
  m.op[0] = operand(mask, DType::Bool, {3, 1});
  int64_t* count = upload<int64_t>({0});
  char* offsets = workspace(m);
  ASSERT_EQ(host::indexTable().nonzero_count(m, count, offsets, stream_), rt::Error::Success);
  EXPECT_EQ(read(count, 1)[0], 3);
  int64_t* coords = upload<int64_t>(std::vector<int64_t>(6, -1));
  ASSERT_EQ(host::indexTable().nonzero(m, coords, 2, 1, 3, offsets, stream_), rt::Error::Success);
  EXPECT_EQ(read(coords, 6), (std::vector<int64_t>{0, 1, 1, 0, 1, 1}));
  // column-major, as the functional nonzero: the rows' indices, then the columns'
  ASSERT_EQ(host::indexTable().nonzero(m, coords, 1, 3, 3, offsets, stream_), rt::Error::Success);
  EXPECT_EQ(read(coords, 6), (std::vector<int64_t>{0, 1, 1, 1, 0, 1}));
  // nonzero_static's limit: the first two elements' rows only
  int64_t* first = upload<int64_t>(std::vector<int64_t>(6, -1));
  ASSERT_EQ(host::indexTable().nonzero(m, first, 2, 1, 2, offsets, stream_), rt::Error::Success);
  EXPECT_EQ(read(first, 6), (std::vector<int64_t>{0, 1, 1, 0, -1, -1}));
}

// A strided mask over many chunks and carry levels (DeepPlanExecutor): the count, the bounds
// and the coordinates against a sequential walk.
TEST_F(IndexKernelTest, CompactionsOverManyCarryLevels) {
  const int64_t rows = 37, cols = 29;  // read transposed: strides (1, rows)
  std::vector<int64_t> values(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) values[i] = (i * 7919) % 11 - 5;
  ElementwiseDesc d;
  d.ndim = 2;
  d.sizes[0] = cols;
  d.sizes[1] = rows;
  d.numel = rows * cols;
  d.noperands = 1;
  d.op[0] = operand(upload(values), DType::Int64, {8, 8 * cols});
  char* workspace = deviceAlloc(compactWorkspaceBytes<DeepPlanExecutor>(d, stream_));
  ASSERT_GT(
      compactCarryPlanOf<DeepPlanExecutor>(compactPlanOf<DeepPlanExecutor>(d, stream_), stream_)
          .levels,
      4);
  std::vector<int64_t> coords;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t i = 0; i < cols; ++i)
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t v = values[j * cols + i];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      if (v != 0) coords.insert(coords.end(), {i, j});
    }
  int64_t* mm = upload<int64_t>({0, 0});
  ASSERT_EQ(launchIndexBounds<DeepPlanExecutor>(d, mm, workspace, stream_), rt::Error::Success);
  EXPECT_EQ(read(mm, 2), (std::vector<int64_t>{lo, hi}));
  int64_t* count = upload<int64_t>({0});
  ASSERT_EQ(launchNonzeroCount<DeepPlanExecutor>(d, count, workspace, stream_), rt::Error::Success);
  ASSERT_EQ(read(count, 1)[0], int64_t(coords.size() / 2));
  const int64_t n = int64_t(coords.size() / 2);
  int64_t* out = upload<int64_t>(std::vector<int64_t>(coords.size(), -1));
  ASSERT_EQ(launchNonzero<DeepPlanExecutor>(d, out, 2, 1, n, workspace, stream_),
            rt::Error::Success);
  EXPECT_EQ(read(out, coords.size()), coords);
  // A limit inside a chunk: the rows before it, and nothing written after.
  const int64_t limit = n / 2 + 1;
  std::vector<int64_t> head(coords.begin(), coords.begin() + 2 * limit);
  head.resize(coords.size(), -1);
  int64_t* cut = upload<int64_t>(std::vector<int64_t>(coords.size(), -1));
  ASSERT_EQ(launchNonzero<DeepPlanExecutor>(d, cut, 2, 1, limit, workspace, stream_),
            rt::Error::Success);
  EXPECT_EQ(read(cut, coords.size()), head);
}

TEST_F(IndexKernelTest, TriangleAndArange) {
  std::vector<float> v(12);
  std::iota(v.begin(), v.end(), 1.0f);
  float* in = upload(v);  // 3 rows x 4 cols
  float* out = upload(std::vector<float>(12, -1));
  ElementwiseDesc d;
  d.ndim = 2;
  d.sizes[0] = 4;
  d.sizes[1] = 3;
  d.numel = 12;
  d.noperands = 2;
  d.op[0] = operand(out, DType::Float, {4, 16});
  d.op[1] = operand(in, DType::Float, {4, 16});
  ASSERT_EQ(host::indexTable().triangle(d, 1, true, stream_), rt::Error::Success);
  EXPECT_EQ(read(out, 12), (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));

  ElementwiseDesc a;
  a.ndim = 1;
  a.sizes[0] = 5;
  a.numel = 5;
  a.noperands = 1;
  a.op[0] = operand(out, DType::Float, {4});
  ASSERT_EQ(host::indexTable().arange(a, Scalar{1.5, 0, false}, Scalar{-0.5, 0, false}, stream_),
            rt::Error::Success);
  auto got = read(out, 5);
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 5),
            (std::vector<float>{1.5, 1, 0.5, 0, -0.5}));
}

// Stable, NaN last ascending / first descending, several slices, odd length (copy-back path).
TEST_F(IndexKernelTest, StableSortOfSlices) {
  const float nan = std::nanf("");
  std::vector<float> keys{3, 1, nan, 1, 2, /* slice 2 */ 5, 5, -1, 0, 5};
  for (bool descending : {false, true}) {
    float* k = upload(keys);
    int64_t* i = upload(std::vector<int64_t>(10));
    float* tk = upload(std::vector<float>(10));
    int64_t* ti = upload(std::vector<int64_t>(10));
    SortDesc d{reinterpret_cast<char*>(k),
               i,
               reinterpret_cast<char*>(tk),
               ti,
               DType::Float,
               2,
               5,
               descending};
    ASSERT_EQ(host::sortTable().sort(d, stream_), rt::Error::Success);
    auto idx = read(i, 10);
    auto sorted = read(k, 10);
    std::vector<int64_t> expected = descending ? std::vector<int64_t>{2, 0, 4, 1, 3, 0, 1, 4, 3, 2}
                                               : std::vector<int64_t>{1, 3, 4, 0, 2, 2, 3, 0, 1, 4};
    EXPECT_EQ(idx, expected) << "descending " << descending;
    for (int j = 0; j < 10; ++j) {
      const float e = keys[(j / 5) * 5 + expected[j]];
      if (std::isnan(e))
        EXPECT_TRUE(std::isnan(sorted[j]));
      else
        EXPECT_EQ(sorted[j], e);
    }
  }
}

}  // namespace
}  // namespace accel::kernels::testing
