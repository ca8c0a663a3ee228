#include "kernels_testing.h"
#include "kernels/amp.h"

namespace accel::kernels::testing {
namespace {

class AmpTest : public KernelTest {
 protected:
  // A one-element float32 device buffer holding v.
  char* scalarBuffer(DType t, double v) {
    std::vector<char> host(elementSize(t));
    storeElem(t, host.data(), v);
    char* dev = deviceAlloc(host.size());
    upload(dev, host);
    return dev;
  }
  double read(DType t, const char* dev) {
    std::vector<char> host(elementSize(t));
    download(host, dev);
    return loadElem(t, host.data());
  }
};

TEST_F(AmpTest, UnscaleMultipliesAndFlagsNonFinite) {
  for (DType t : {DType::Float, DType::Half, DType::BFloat16}) {
    for (bool poison : {false, true}) {
      Problem p(this, {1000});
      p.addContiguous(t, [](int64_t j) { return double(j % 7); });
      char* found = scalarBuffer(DType::Float, 0);
      char* inv = scalarBuffer(DType::Float, 0.25);
      if (poison) {
        // overwrite element 500 with inf
        std::vector<char> host(elementSize(t));
        storeElem(t, host.data(), INFINITY);
        upload(p.desc().op[0].data + 500 * elementSize(t), host);
      }
      ElementwiseDesc d = p.desc();
      d.noperands = 2;
      d.op[1] = d.op[0];
      ASSERT_EQ(host::ampTable().amp_unscale(d, reinterpret_cast<float*>(found),
                                             reinterpret_cast<const float*>(inv), stream_),
                rt::Error::Success);
      p.download();
      EXPECT_EQ(read(DType::Float, found), poison ? 1.0 : 0.0);
      EXPECT_EQ(p.at(0, 3), 0.75);
    }
  }
}

TEST_F(AmpTest, UpdateScaleBacksOffAndGrows) {
  char* scale = scalarBuffer(DType::Float, 1024);
  char* tracker = scalarBuffer(DType::Int32, 0);
  char* found = scalarBuffer(DType::Float, 1);
  ElementwiseDesc d;
  d.ndim = 1;
  d.sizes[0] = 1;
  d.numel = 1;
  d.noperands = 2;
  for (int k = 0; k < 2; ++k)
    d.op[k].data = scale, d.op[k].dtype = DType::Float, d.op[k].strides[0] = 4;
  auto step = [&] {
    ASSERT_EQ(host::ampTable().amp_update_scale(d, reinterpret_cast<int32_t*>(tracker),
                                                reinterpret_cast<const float*>(found), 2.0, 0.5, 2,
                                                stream_),
              rt::Error::Success);
  };
  step();
  EXPECT_EQ(read(DType::Float, scale), 512);
  EXPECT_EQ(read(DType::Int32, tracker), 0);
  std::vector<char> zero(4, 0);
  upload(found, zero);
  step();
  EXPECT_EQ(read(DType::Float, scale), 512);
  EXPECT_EQ(read(DType::Int32, tracker), 1);
  step();
  EXPECT_EQ(read(DType::Float, scale), 1024);
  EXPECT_EQ(read(DType::Int32, tracker), 0);
}

}  // namespace
}  // namespace accel::kernels::testing
