// The fault injector behind TORCH_ACCEL_FAULTS: parsing, rates and determinism.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "runtime/host/fault.h"

namespace accel::rt::host {
namespace {

std::vector<bool> draws(FaultInjector& f, FaultSite site, int n) {
  std::vector<bool> out;
  for (int i = 0; i < n; ++i) out.push_back(f.inject(site));
  return out;
}

TEST(Faults, EmptySpecInjectsNothing) {
  FaultInjector f("");
  EXPECT_FALSE(f.enabled());
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(f.inject(FaultSite::Malloc));
  EXPECT_EQ(f.summary(), "malloc=0 memcpy=0 launch=0");
}

TEST(Faults, RatesAreHonouredPerSite) {
  FaultInjector f("malloc:1,memcpy:0,launch:0.25,seed:3");
  EXPECT_TRUE(f.enabled());
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(f.inject(FaultSite::Malloc));
    EXPECT_FALSE(f.inject(FaultSite::Memcpy));
  }
  for (int i = 0; i < 10000; ++i) f.inject(FaultSite::Launch);
  EXPECT_EQ(f.injected(FaultSite::Malloc), 100u);
  EXPECT_EQ(f.injected(FaultSite::Memcpy), 0u);
  EXPECT_NEAR(double(f.injected(FaultSite::Launch)), 2500.0, 200.0);  // ~4.6 sigma
}

TEST(Faults, SameSeedSameFaults) {
  FaultInjector a("malloc:0.1,seed:42"), b("malloc:0.1,seed:42"), c("malloc:0.1,seed:43");
  const auto da = draws(a, FaultSite::Malloc, 2000);
  EXPECT_EQ(da, draws(b, FaultSite::Malloc, 2000));
  EXPECT_NE(da, draws(c, FaultSite::Malloc, 2000));
}

TEST(Faults, OneSiteDoesNotShiftAnother) {
  FaultInjector a("malloc:0.1,seed:5"), b("malloc:0.1,memcpy:0.5,seed:5");
  for (int i = 0; i < 100; ++i) b.inject(FaultSite::Memcpy);
  EXPECT_EQ(draws(a, FaultSite::Malloc, 1000), draws(b, FaultSite::Malloc, 1000));
}

TEST(Faults, MalformedSpecsNameTheProblem) {
  const char* bad[] = {"malloc",   "malloc:2", "malloc:-0.1", "malloc:x",
                       "free:0.1", "seed:abc", "launch:"};
  for (const char* spec : bad) {
    try {
      FaultInjector f(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("TORCH_ACCEL_FAULTS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace accel::rt::host
