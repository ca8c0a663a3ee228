#include "kernels/rnn.h"

#include "kernels_testing.h"

namespace accel::kernels::testing {
namespace {

class RnnTest : public KernelTest {};

constexpr int64_t kBatch = 2, kHidden = 3;

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// A device buffer of n elements of `t` holding value(j), and its Problem (for download/at).
struct Buffer {
  Problem p;
  Buffer(KernelTest* test, DType t, int64_t n, const std::function<double(int64_t)>& value)
      : p(test, {n}) {
    p.addContiguous(t, value);
  }
  char* data() { return p.desc().op[0].data; }
  double at(int64_t i) const { return p.at(0, i); }
};

double wave(int64_t j, double scale) { return std::sin(double(j) * 0.7 + scale) * scale; }

TEST_F(RnnTest, LstmCellMatchesScalarMath) {
  for (DType t : {DType::Float, DType::Double, DType::BFloat16}) {
    const double tol = t == DType::BFloat16 ? 1e-2 : 1e-6;
    const int64_t width = 4 * kHidden;
    Buffer ig(this, t, kBatch * width, [](int64_t j) { return wave(j, 1.5); });
    Buffer hg(this, t, kBatch * width, [](int64_t j) { return wave(j, 0.8); });
    Buffer ib(this, t, width, [](int64_t j) { return wave(j, 0.3); });
    Buffer hb(this, t, width, [](int64_t j) { return wave(j, 0.2); });
    Buffer cx(this, t, kBatch * kHidden, [](int64_t j) { return wave(j, 1.1); });
    Buffer hy(this, t, kBatch * kHidden, [](int64_t) { return 0.0; });
    Buffer cy(this, t, kBatch * kHidden, [](int64_t) { return 0.0; });
    Buffer ws(this, t, kBatch * width, [](int64_t) { return 0.0; });
    RnnCellDesc d;
    d.dtype = t;
    d.batch = kBatch;
    d.hidden = kHidden;
    d.input_gates = ig.data();
    d.hidden_gates = hg.data();
    d.input_bias = ib.data();
    d.hidden_bias = hb.data();
    d.prev = cx.data();
    d.hy = hy.data();
    d.cy = cy.data();
    d.workspace = ws.data();
    ASSERT_EQ(host::rnnTable().lstm_cell(d, stream_), rt::Error::Success);
    hy.p.download();
    cy.p.download();
    ws.p.download();
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t j = 0; j < kHidden; ++j) {
        double g[4];
        for (int k = 0; k < 4; ++k) {
          const int64_t at = b * width + k * kHidden + j;
          const double pre =
              ig.at(at) + hg.at(at) + ib.at(k * kHidden + j) + hb.at(k * kHidden + j);
          g[k] = k == 2 ? std::tanh(pre) : sigmoid(pre);
          ASSERT_NEAR(ws.at(at), g[k], tol) << "gate " << k;
        }
        const int64_t i = b * kHidden + j;
        const double c = g[1] * cx.at(i) + g[0] * g[2];
        ASSERT_NEAR(cy.at(i), c, tol * 2);
        ASSERT_NEAR(hy.at(i), g[3] * std::tanh(c), tol * 2);
      }
    }
  }
}

TEST_F(RnnTest, GruCellMatchesScalarMathWithoutBias) {
  const int64_t width = 3 * kHidden;
  Buffer ig(this, DType::Float, kBatch * width, [](int64_t j) { return wave(j, 1.2); });
  Buffer hg(this, DType::Float, kBatch * width, [](int64_t j) { return wave(j, 0.9); });
  Buffer hx(this, DType::Float, kBatch * kHidden, [](int64_t j) { return wave(j, 0.7); });
  Buffer hy(this, DType::Float, kBatch * kHidden, [](int64_t) { return 0.0; });
  Buffer ws(this, DType::Float, kBatch * 5 * kHidden, [](int64_t) { return 0.0; });
  RnnCellDesc d;
  d.batch = kBatch;
  d.hidden = kHidden;
  d.input_gates = ig.data();
  d.hidden_gates = hg.data();
  d.prev = hx.data();
  d.hy = hy.data();
  d.workspace = ws.data();
  ASSERT_EQ(host::rnnTable().gru_cell(d, stream_), rt::Error::Success);
  hy.p.download();
  ws.p.download();
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t j = 0; j < kHidden; ++j) {
      auto in = [&](const Buffer& x, int k) { return x.at(b * width + k * kHidden + j); };
      const double r = sigmoid(in(ig, 0) + in(hg, 0)), z = sigmoid(in(ig, 1) + in(hg, 1));
      const double n = std::tanh(in(ig, 2) + r * in(hg, 2));
      const int64_t i = b * kHidden + j;
      ASSERT_NEAR(hy.at(i), n + z * (hx.at(i) - n), 1e-6);
      const double saved[5] = {r, z, n, hx.at(i), in(hg, 2)};
      for (int k = 0; k < 5; ++k)
        ASSERT_NEAR(ws.at(b * 5 * kHidden + k * kHidden + j), saved[k], 1e-6);
    }
  }
}

TEST_F(RnnTest, RefusesNonFloatingDtypes) {
  RnnCellDesc d;
  d.dtype = DType::Int64;
  d.batch = 1;
  d.hidden = 1;
  EXPECT_EQ(host::rnnTable().lstm_cell(d, stream_), rt::Error::InvalidValue);
  EXPECT_EQ(host::rnnTable().gru_cell_backward(d, stream_), rt::Error::InvalidValue);
  d.hidden = -1;
  d.dtype = DType::Float;
  EXPECT_EQ(host::rnnTable().lstm_cell(d, stream_), rt::Error::InvalidValue);
}

}  // namespace
}  // namespace accel::kernels::testing
