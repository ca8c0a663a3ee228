// The host driver's support for tooling: interprocess handles (memfd-backed allocations),
// external streams, the per-thread work count profilers read, peer access and utilization.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "runtime_test_util.h"

namespace accel::rt {
namespace {

TEST(RuntimeIpc, AHandleMapsTheSameMemoryElsewhere) {
  auto drv = test::hostDriver(2, 64 << 20);
  void* p = nullptr;
  ASSERT_EQ(drv->malloc(0, &p, 3 << 20), Error::Success);
  IpcMemHandle h;
  ASSERT_EQ(drv->ipcGetMemHandle(p, &h), Error::Success);
  EXPECT_GE(h.fd, 0);
  EXPECT_EQ(h.size, size_t{3} << 20);
  EXPECT_NE(h.id, 0u);
  // Another driver (as another process would) maps it: both see the same bytes.
  auto other = test::hostDriver(2, 64 << 20);
  void* q = nullptr;
  ASSERT_EQ(other->ipcOpenMemHandle(1, h, &q), Error::Success);
  EXPECT_NE(q, p);
  EXPECT_EQ(other->pointerDevice(q), 1);
  const char msg[] = "shared";
  ASSERT_EQ(drv->memcpyAsync(p, msg, sizeof(msg), MemcpyKind::HostToDevice, drv->defaultStream(0)),
            Error::Success);
  ASSERT_EQ(drv->deviceSynchronize(0), Error::Success);
  char seen[sizeof(msg)] = {};
  ASSERT_EQ(
      other->memcpyAsync(seen, q, sizeof(msg), MemcpyKind::DeviceToHost, other->defaultStream(1)),
      Error::Success);
  ASSERT_EQ(other->deviceSynchronize(1), Error::Success);
  EXPECT_STREQ(seen, msg);
  // Imported memory is not charged to the importer's capacity and is not free()'d.
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(other->memGetInfo(1, &free_bytes, &total), Error::Success);
  EXPECT_EQ(free_bytes, total);
  EXPECT_EQ(other->free(1, q), Error::InvalidValue);
  ASSERT_EQ(other->ipcCloseMemHandle(q), Error::Success);
  EXPECT_EQ(other->pointerDevice(q), -1);
  EXPECT_EQ(drv->ipcGetMemHandle(static_cast<char*>(p) + 512, &h), Error::InvalidValue);
  ASSERT_EQ(drv->free(0, p), Error::Success);
}

TEST(RuntimeStreams, NativeHandlesMapBackToStreams) {
  auto drv = test::hostDriver(2);
  Stream s = nullptr;
  ASSERT_EQ(drv->streamCreate(1, &s, 0), Error::Success);
  Stream found = nullptr;
  ASSERT_EQ(drv->streamFromNative(1, drv->nativeStream(s), &found), Error::Success);
  EXPECT_EQ(found, s);
  ASSERT_EQ(drv->streamFromNative(0, drv->nativeStream(drv->defaultStream(0)), &found),
            Error::Success);
  EXPECT_EQ(found, drv->defaultStream(0));
  EXPECT_EQ(drv->streamFromNative(0, drv->nativeStream(s), &found), Error::InvalidValue);
  int bogus = 0;
  EXPECT_EQ(drv->streamFromNative(0, &bogus, &found), Error::InvalidValue);
  ASSERT_EQ(drv->streamDestroy(s), Error::Success);
}

TEST(RuntimeWorkCount, CountsWhatThisThreadQueued) {
  auto drv = test::hostDriver(1);
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(drv->threadWorkCount(&before));
  void* p = nullptr;
  ASSERT_EQ(drv->malloc(0, &p, 4096), Error::Success);
  ASSERT_EQ(drv->memsetAsync(p, 1, 4096, drv->defaultStream(0)), Error::Success);
  char buf[16];
  ASSERT_EQ(drv->memcpyAsync(buf, p, sizeof(buf), MemcpyKind::DeviceToHost, drv->defaultStream(0)),
            Error::Success);
  Event e = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &e, kEventDefault), Error::Success);
  ASSERT_EQ(drv->eventRecord(e, drv->defaultStream(0)), Error::Success);  // not work
  ASSERT_TRUE(drv->threadWorkCount(&after));
  EXPECT_EQ(after - before, 2u);
  uint64_t on_other = 1;
  std::thread([&] { drv->threadWorkCount(&on_other); }).join();
  EXPECT_EQ(on_other, 0u);  // per thread
  ASSERT_EQ(drv->deviceSynchronize(0), Error::Success);
  drv->eventDestroy(e);
  ASSERT_EQ(drv->free(0, p), Error::Success);
}

TEST(RuntimeDevice, PeerAccessAndUtilization) {
  auto drv = test::hostDriver(2);
  bool can = false;
  ASSERT_EQ(drv->deviceCanAccessPeer(0, 1, &can), Error::Success);
  EXPECT_TRUE(can);
  EXPECT_EQ(drv->deviceCanAccessPeer(0, 2, &can), Error::InvalidDevice);
  int percent = -1;
  ASSERT_EQ(drv->deviceUtilization(1, &percent), Error::Success);  // starts a window
  auto busy = [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); };
  ASSERT_EQ(
      drv->launchHostFunc(
          drv->defaultStream(1), [](void* f) { (*static_cast<decltype(busy)*>(f))(); }, &busy),
      Error::Success);
  ASSERT_EQ(drv->deviceSynchronize(1), Error::Success);
  ASSERT_EQ(drv->deviceUtilization(1, &percent), Error::Success);
  EXPECT_GT(percent, 30);
  EXPECT_LE(percent, 100);
  EXPECT_EQ(drv->deviceUtilization(5, &percent), Error::InvalidDevice);
}

}  // namespace
}  // namespace accel::rt
