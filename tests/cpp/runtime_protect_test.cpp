#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/host/device_access.h"
#include "runtime/host/host_launch.h"
#include "runtime_test_util.h"

namespace accel::rt {
namespace {

// Reads through a volatile pointer so the compiler cannot drop the access.
int readByte(const void* p) { return *static_cast<const volatile char*>(p); }

TEST(RuntimeProtectDeathTest, HostReadOfDeviceMemoryFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto drv = test::hostDriver(1, 1 << 20, /*protect=*/true);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 4096), Error::Success);
  EXPECT_DEATH(readByte(d), "");  // SIGSEGV (a sanitizer turns it into an exit)
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

TEST(RuntimeProtect, DriverOperationsAndDeviceAccessMayTouchIt) {
  auto drv = test::hostDriver(1, 1 << 20, /*protect=*/true);
  Stream s = drv->defaultStream(0);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 4096), Error::Success);
  std::vector<char> h(4096, 5), back(4096, 0);
  ASSERT_EQ(drv->memcpyAsync(d, h.data(), 4096, MemcpyKind::HostToDevice, s), Error::Success);
  ASSERT_EQ(drv->memsetAsync(d, 9, 16, s), Error::Success);
  int in_kernel = 0;
  ASSERT_EQ(host::enqueue(s, [&] { in_kernel = readByte(static_cast<char*>(d) + 100); }),
            Error::Success);
  ASSERT_EQ(drv->memcpyAsync(back.data(), d, 4096, MemcpyKind::DeviceToHost, s), Error::Success);
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(in_kernel, 5);
  EXPECT_EQ(back[0], 9);
  EXPECT_EQ(back[4095], 5);
  {
    host::DeviceAccess access;
    EXPECT_EQ(readByte(d), 9);
    host::DeviceAccess nested;
    static_cast<volatile char*>(d)[1] = 3;
  }
  {
    host::DeviceAccess access;  // nested scopes released: a fresh one re-opens it
    EXPECT_EQ(readByte(static_cast<char*>(d) + 1), 3);
  }
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

TEST(RuntimeProtectDeathTest, ProtectionReturnsAfterDeviceAccessEnds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto drv = test::hostDriver(1, 1 << 20, /*protect=*/true);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 4096), Error::Success);
  {
    host::DeviceAccess access;
    readByte(d);
  }
  EXPECT_DEATH(readByte(d), "");  // SIGSEGV (a sanitizer turns it into an exit)
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

TEST(RuntimeProtect, UnprotectedMemoryIsPlainMemory) {
  auto drv = test::hostDriver(1, 1 << 20, /*protect=*/false);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 4096), Error::Success);
  std::memset(d, 1, 4096);  // allowed: no protect mode
  EXPECT_EQ(readByte(d), 1);
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

}  // namespace
}  // namespace accel::rt
