#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runtime/driver.h"
#include "runtime/host/host_driver.h"

namespace accel::rt {
namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(RuntimeDriver, ErrorStrings) {
  EXPECT_STREQ(errorString(Error::Success), "no error");
  EXPECT_STREQ(errorString(Error::OutOfMemory), "out of memory");
  EXPECT_STREQ(errorString(Error::InvalidValue), "invalid argument");
  EXPECT_STREQ(errorString(static_cast<Error>(1234)), "unknown error");
}

TEST(RuntimeDriver, HostConfigFromEnv) {
  ScopedEnv devices("TORCH_ACCEL_HOST_DEVICES", "3");
  ScopedEnv memory("TORCH_ACCEL_HOST_MEMORY", "512M");
  ScopedEnv protect("TORCH_ACCEL_PROTECT", "1");
  ScopedEnv blocking("TORCH_ACCEL_LAUNCH_BLOCKING", "0");
  const host::HostConfig c = host::hostConfigFromEnv();
  EXPECT_EQ(c.devices, 3);
  EXPECT_EQ(c.capacity, size_t{512} << 20);
  EXPECT_TRUE(c.protect);
  EXPECT_FALSE(c.launch_blocking);
  {
    ScopedEnv g("TORCH_ACCEL_HOST_MEMORY", "2g");
    EXPECT_EQ(host::hostConfigFromEnv().capacity, size_t{2} << 30);
  }
  {
    ScopedEnv plain("TORCH_ACCEL_HOST_MEMORY", "123456");
    EXPECT_EQ(host::hostConfigFromEnv().capacity, size_t{123456});
  }
  for (const char* bad : {"12X", "M", "-5", "0"}) {
    ScopedEnv m("TORCH_ACCEL_HOST_MEMORY", bad);
    EXPECT_THROW(host::hostConfigFromEnv(), std::runtime_error) << bad;
  }
  ScopedEnv bad_devices("TORCH_ACCEL_HOST_DEVICES", "two");
  EXPECT_THROW(host::hostConfigFromEnv(), std::runtime_error);
}

TEST(RuntimeDriver, DefaultsWithoutEnv) {
  for (const char* name : {"TORCH_ACCEL_HOST_DEVICES", "TORCH_ACCEL_HOST_MEMORY",
                           "TORCH_ACCEL_PROTECT", "TORCH_ACCEL_LAUNCH_BLOCKING"}) {
    unsetenv(name);
  }
  const host::HostConfig c = host::hostConfigFromEnv();
  EXPECT_EQ(c.devices, 2);
  EXPECT_GT(c.capacity, 0u);
  EXPECT_LE(c.capacity, size_t{8} << 30);
  EXPECT_FALSE(c.protect);
}

// The only test that touches the process-wide driver, so the env set here decides it.
TEST(RuntimeDriver, SelectedByEnv) {
  ScopedEnv choice("TORCH_ACCEL_DRIVER", "host");
  ScopedEnv devices("TORCH_ACCEL_HOST_DEVICES", "3");
  ScopedEnv memory("TORCH_ACCEL_HOST_MEMORY", "16M");
  Driver& d = driver();
  EXPECT_STREQ(d.name(), "host");
  EXPECT_EQ(d.deviceCount(), 3);
  EXPECT_EQ(&d, &driver());
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(d.memGetInfo(0, &free_bytes, &total), Error::Success);
  EXPECT_EQ(total, size_t{16} << 20);
  EXPECT_FALSE(inBadFork());
}

TEST(RuntimeDriver, PluginLoadsWhenBuilt) {
  const std::string status = cudaPluginStatus();
  if (!cudaPluginBuilt()) {
    EXPECT_NE(status.find("not built"), std::string::npos) << status;
    EXPECT_EQ(cudaPluginSymbol("accel_cuda_driver"), nullptr);
  } else {
    // Built: it loads, and says why it is unusable when no GPU answers.
    EXPECT_NE(cudaPluginSymbol("accel_cuda_driver"), nullptr) << status;
  }
}

}  // namespace
}  // namespace accel::rt
