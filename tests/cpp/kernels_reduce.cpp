// The reduction family's host build against plain C++ references.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/host/plan_executor.h"
#include "kernels/reduce.h"
#include "kernels_testing.h"

namespace accel::kernels::testing {
namespace {

class ReduceTest : public KernelTest {
 protected:
  template <class T>
  char* put(const std::vector<T>& v) {
    std::vector<char> bytes(v.size() * sizeof(T));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    char* dev = deviceAlloc(bytes.size());
    upload(dev, bytes);
    return dev;
  }
  template <class T>
  std::vector<T> get(const char* dev, size_t n) {
    std::vector<char> bytes(n * sizeof(T));
    download(bytes, dev);
    std::vector<T> v(n);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  // [rows, cols] row-major float matrix reduced along `along` (0: rows, 1: cols).
  ReduceDesc matrix(const char* in, int64_t rows, int64_t cols, int along, char* out0,
                    char* out1 = nullptr) {
    ReduceDesc d;
    d.in = in;
    const int64_t size[2] = {cols, rows}, stride[2] = {4, cols * 4};  // innermost first
    const int r = along == 1 ? 0 : 1, k = 1 - r;
    d.red_ndim = d.out_ndim = 1;
    d.red_sizes[0] = d.red_numel = size[r];
    d.in_red_strides[0] = stride[r];
    d.out_sizes[0] = d.out_numel = size[k];
    d.in_out_strides[0] = stride[k];
    d.out[0] = out0;
    d.out[1] = out1;
    d.out_strides[0][0] = 4;
    d.out_strides[1][0] = 8;
    return d;
  }
};

TEST_F(ReduceTest, SumAlongEitherDimMatchesDouble) {
  const int64_t rows = 37, cols = 1003;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * double(i)) * 10;
  char* in = put(x);
  for (int along : {0, 1}) {
    const int64_t n_out = along == 1 ? rows : cols;
    char* out = deviceAlloc(n_out * 4);
    ASSERT_EQ(
        host::reduceTable().reduce(ReduceOp::Sum, matrix(in, rows, cols, along, out), {}, stream_),
        rt::Error::Success);
    auto got = get<float>(out, n_out);
    for (int64_t o = 0; o < n_out; ++o) {
      double ref = 0;
      for (int64_t j = 0; j < (along == 1 ? cols : rows); ++j)
        ref += along == 1 ? x[o * cols + j] : x[j * cols + o];
      ASSERT_NEAR(got[o], ref, 1e-3) << "along " << along << " output " << o;
    }
  }
}

TEST_F(ReduceTest, LongFullSumTakesTheChunkedPath) {
  const int64_t n = (int64_t(1) << 21) + 17;
  std::vector<float> x(n);
  double ref = 0;
  for (int64_t i = 0; i < n; ++i) ref += x[i] = float(1 + (i % 7) * 0.25);
  char* out = deviceAlloc(4);
  ReduceDesc d = matrix(put(x), 1, n, 1, out);
  ASSERT_EQ(host::reduceTable().reduce(ReduceOp::Sum, d, {}, stream_), rt::Error::Success);
  EXPECT_NEAR(get<float>(out, 1)[0], ref, ref * 1e-6);
}

TEST_F(ReduceTest, MaxTakesFirstNanThenFirstOfTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{1, 3, 3, 0, /**/ 2, nan, 5, nan};
  char* values = deviceAlloc(8);
  char* idx = deviceAlloc(16);
  ASSERT_EQ(
      host::reduceTable().reduce(ReduceOp::Max, matrix(put(x), 2, 4, 1, values, idx), {}, stream_),
      rt::Error::Success);
  auto v = get<float>(values, 2);
  auto i = get<int64_t>(idx, 2);
  EXPECT_EQ(v[0], 3);
  EXPECT_EQ(i[0], 1);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(i[1], 1);
}

TEST_F(ReduceTest, VarAndMeanWithCorrection) {
  std::vector<float> x{1, 2, 3, 4, 10, 10, 10, 10};
  char* var = deviceAlloc(8);
  char* mean = deviceAlloc(8);
  ReduceDesc d = matrix(put(x), 2, 4, 1, var, mean);
  d.out_dtype[1] = DType::Float;
  d.out_strides[1][0] = 4;
  ReduceParams p;
  p.correction = 1;
  ASSERT_EQ(host::reduceTable().reduce(ReduceOp::Var, d, p, stream_), rt::Error::Success);
  auto v = get<float>(var, 2), m = get<float>(mean, 2);
  EXPECT_NEAR(v[0], 5.0 / 3.0, 1e-6);
  EXPECT_EQ(v[1], 0);
  EXPECT_NEAR(m[0], 2.5, 1e-6);
  EXPECT_EQ(m[1], 10);
}

TEST_F(ReduceTest, CumsumOfInt64AlongTheOuterDim) {
  std::vector<int64_t> x{1, 2, 3, 4, 5, 6};  // [2, 3], scanned along dim 0
  char* out = deviceAlloc(6 * 8);
  ScanDesc d;
  d.in = put(x);
  d.dtype = DType::Int64;
  d.out = out;
  d.outer = 1;
  d.n = 2;
  d.inner = 3;
  EXPECT_EQ(host::reduceTable().scan_workspace_bytes(d, stream_), 0);  // a task per line
  ASSERT_EQ(host::reduceTable().scan(d, stream_), rt::Error::Success);
  EXPECT_EQ(get<int64_t>(out, 6), (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
}

// Lines split into chunks: every pass against the sequential scan, with the host's plan and
// with one deep enough for many carry levels.
TEST_F(ReduceTest, SplitScansMatchTheSequentialOnes) {
  const int64_t grain = host::PlanExecutor::scanGeometry(stream_).min_chunk;
  for (auto [n, deep] : {std::pair<int64_t, bool>{5 * grain + 17, false}, {1001, true}}) {
    const int64_t inner = 2;
    std::vector<int64_t> x(n * inner);
    for (int64_t i = 0; i < n * inner; ++i) x[i] = (i * 7919) % 13 - 6;
    ScanDesc d;
    d.in = put(x);
    d.dtype = DType::Int64;
    d.n = n;
    d.inner = inner;
    d.out = deviceAlloc(n * inner * 8);
    d.indices = reinterpret_cast<int64_t*>(deviceAlloc(n * inner * 8));
    for (ScanOp op : {ScanOp::Sum, ScanOp::Max, ScanOp::Min}) {
      d.op = op;
      const int64_t bytes = deep ? scanWorkspaceBytes<DeepPlanExecutor>(d, stream_)
                                 : host::reduceTable().scan_workspace_bytes(d, stream_);
      ASSERT_GT(bytes, 0);
      d.workspace = deviceAlloc(bytes);
      if (deep) {
        const ScanPlan p = scanPlanOf<DeepPlanExecutor>(d, stream_);
        ASSERT_GT(scanCarryPlanOf<DeepPlanExecutor>(d, p, stream_).levels, 4);
      }
      ASSERT_EQ(
          deep ? launchScan<DeepPlanExecutor>(d, stream_) : host::reduceTable().scan(d, stream_),
          rt::Error::Success);
      const std::vector<int64_t> got = get<int64_t>(d.out, n * inner);
      const std::vector<int64_t> at = get<int64_t>(reinterpret_cast<char*>(d.indices), n * inner);
      for (int64_t k = 0; k < inner; ++k) {
        int64_t acc = 0, best = 0, pos = 0;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t v = x[j * inner + k];
          acc += v;
          if (j == 0 || (op == ScanOp::Max ? v >= best : v <= best)) best = v, pos = j;
          const int64_t want = op == ScanOp::Sum ? acc : best;
          ASSERT_EQ(got[j * inner + k], want) << int(op) << " " << j << " deep " << deep;
          if (op != ScanOp::Sum) ASSERT_EQ(at[j * inner + k], pos) << int(op) << " " << j;
        }
      }
    }
  }
}

TEST_F(ReduceTest, CumprodAndCummaxAlongALine) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{2, 3, 3, 1, nan, 5};  // one line of 6
  char* out = deviceAlloc(6 * 4);
  char* idx = deviceAlloc(6 * 8);
  ScanDesc d;
  d.op = ScanOp::Prod;
  d.in = put(x);
  d.dtype = DType::Float;
  d.out = out;
  d.n = 4;  // the first four only
  ASSERT_EQ(host::reduceTable().scan(d, stream_), rt::Error::Success);
  EXPECT_EQ(get<float>(out, 4), (std::vector<float>{2, 6, 18, 18}));
  d.op = ScanOp::Max;
  EXPECT_EQ(host::reduceTable().scan(d, stream_), rt::Error::InvalidValue);  // no indices
  d.indices = reinterpret_cast<int64_t*>(idx);
  d.n = 6;
  ASSERT_EQ(host::reduceTable().scan(d, stream_), rt::Error::Success);
  // A tie moves to the later position; NaN stays once seen.
  EXPECT_EQ(get<int64_t>(idx, 6), (std::vector<int64_t>{0, 1, 2, 2, 4, 4}));
  const std::vector<float> v = get<float>(out, 6);
  EXPECT_EQ(v[3], 3);
  EXPECT_TRUE(std::isnan(v[4]) && std::isnan(v[5]));
}

TEST_F(ReduceTest, NllLossMeanAddsChunksInOrder) {
  // More than one chunk of samples, so the pairwise merge of partials is exercised.
  const int64_t n = 3 * kNllChunk + 5, c = 3;
  std::vector<float> x(n * c);
  std::vector<int64_t> t(n);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) x[i * c + k] = float((i * 7 + k) % 11) / 11.0f;
    t[i] = i % c;
    total -= x[i * c + t[i]];
  }
  NllLossDesc d;
  d.input = put(x);
  d.target = reinterpret_cast<const int64_t*>(put(t));
  d.n = n;
  d.c = c;
  d.output = deviceAlloc(4);
  d.total_weight = deviceAlloc(4);
  d.scratch = deviceAlloc(nllScratchBytes(n));
  d.error = driver_->deviceErrorRecord(0);
  ASSERT_EQ(host::reduceTable().nll_loss_forward(d, stream_), rt::Error::Success);
  EXPECT_NEAR(get<float>(d.output, 1)[0], total / double(n), 1e-6);
  EXPECT_EQ(get<float>(d.total_weight, 1)[0], float(n));
}

TEST_F(ReduceTest, NllLossBadTargetFailsTheNextSyncOnceAndLeavesTheStreamUsable) {
  std::vector<float> x(8, 0.5f);
  std::vector<int64_t> t{0, 9};
  NllLossDesc d;
  d.input = put(x);
  d.target = reinterpret_cast<const int64_t*>(put(t));
  d.n = 2;
  d.c = 4;
  d.output = deviceAlloc(4);
  d.total_weight = deviceAlloc(4);
  d.scratch = deviceAlloc(nllScratchBytes(2));
  d.error = driver_->deviceErrorRecord(0);
  ASSERT_EQ(host::reduceTable().nll_loss_forward(d, stream_), rt::Error::Success);
  EXPECT_EQ(driver_->streamSynchronize(stream_), rt::Error::LaunchFailure);
  EXPECT_EQ(driver_->lastErrorMessage(0), "Target 9 is out of bounds.");
  EXPECT_EQ(driver_->getLastError(0), rt::Error::LaunchFailure);
  EXPECT_EQ(driver_->streamSynchronize(stream_), rt::Error::Success);
  // Without an error record the launch is refused rather than unchecked.
  d.error = nullptr;
  EXPECT_EQ(host::reduceTable().nll_loss_forward(d, stream_), rt::Error::InvalidValue);
}

}  // namespace
}  // namespace accel::kernels::testing
