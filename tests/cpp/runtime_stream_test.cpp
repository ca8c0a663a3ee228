#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/host/host_launch.h"
#include "runtime_test_util.h"

namespace accel::rt {
namespace {

using namespace std::chrono_literals;

TEST(RuntimeStream, WorkRunsInOrder) {
  auto drv = test::hostDriver();
  Stream s = nullptr;
  ASSERT_EQ(drv->streamCreate(0, &s, kLowestPriority), Error::Success);
  // Each step depends on the previous one: any reordering changes the result.
  int64_t value = 1;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(host::enqueue(s, [&value, i] { value = value * 3 % 1000003 + i; }), Error::Success);
  }
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  int64_t expected = 1;
  for (int i = 0; i < 1000; ++i) expected = expected * 3 % 1000003 + i;
  EXPECT_EQ(value, expected);
  EXPECT_EQ(drv->streamDestroy(s), Error::Success);
}

TEST(RuntimeStream, QueryReportsPendingWork) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  EXPECT_EQ(drv->streamQuery(s), Error::Success);
  std::atomic<bool> release{false};
  ASSERT_EQ(host::enqueue(s,
                          [&] {
                            while (!release) std::this_thread::yield();
                          }),
            Error::Success);
  EXPECT_EQ(drv->streamQuery(s), Error::NotReady);
  release = true;
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(drv->streamQuery(s), Error::Success);
}

TEST(RuntimeStream, StreamsRunConcurrently) {
  auto drv = test::hostDriver();
  Stream a = nullptr, b = nullptr;
  ASSERT_EQ(drv->streamCreate(0, &a, kLowestPriority), Error::Success);
  ASSERT_EQ(drv->streamCreate(0, &b, kHighestPriority), Error::Success);
  EXPECT_EQ(drv->streamPriority(b), kHighestPriority);
  EXPECT_EQ(drv->streamDevice(b), 0);
  // Each item waits for the other: this only finishes if both run at the same time.
  std::atomic<bool> a_started{false}, b_started{false};
  auto meet = [](std::atomic<bool>& mine, std::atomic<bool>& other) {
    mine = true;
    while (!other) std::this_thread::yield();
  };
  ASSERT_EQ(host::enqueue(a, [&] { meet(a_started, b_started); }), Error::Success);
  ASSERT_EQ(host::enqueue(b, [&] { meet(b_started, a_started); }), Error::Success);
  EXPECT_EQ(drv->deviceSynchronize(0), Error::Success);
  EXPECT_TRUE(a_started && b_started);
  EXPECT_EQ(drv->streamDestroy(a), Error::Success);
  EXPECT_EQ(drv->streamDestroy(b), Error::Success);
}

TEST(RuntimeStream, DefaultStreamCannotBeDestroyed) {
  auto drv = test::hostDriver();
  EXPECT_NE(drv->defaultStream(1), nullptr);
  EXPECT_NE(drv->defaultStream(0), drv->defaultStream(1));
  EXPECT_EQ(drv->defaultStream(2), nullptr);
  EXPECT_EQ(drv->streamDevice(drv->defaultStream(1)), 1);
  EXPECT_EQ(drv->nativeStream(drv->defaultStream(1)), drv->defaultStream(1));
  EXPECT_EQ(drv->streamDestroy(drv->defaultStream(0)), Error::InvalidValue);
  Stream s = nullptr;
  EXPECT_EQ(drv->streamCreate(2, &s, 0), Error::InvalidDevice);
}

TEST(RuntimeStream, DestroyFinishesQueuedWork) {
  auto drv = test::hostDriver();
  Stream s = nullptr;
  ASSERT_EQ(drv->streamCreate(1, &s, 0), Error::Success);
  std::atomic<int> done{0};
  for (int i = 0; i < 100; ++i) host::enqueue(s, [&] { ++done; });
  EXPECT_EQ(drv->streamDestroy(s), Error::Success);
  EXPECT_EQ(done, 100);
}

TEST(RuntimeStream, HostFuncRunsInOrder) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  std::vector<int> order;
  host::enqueue(s, [&] {
    std::this_thread::sleep_for(5ms);
    order.push_back(1);
  });
  auto push_two = [](void* p) { static_cast<std::vector<int>*>(p)->push_back(2); };
  ASSERT_EQ(drv->launchHostFunc(s, push_two, &order), Error::Success);
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(RuntimeStream, ThrowingWorkIsStickyAndWorkerSurvives) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(1);
  ASSERT_EQ(host::enqueue(s, [] { throw std::runtime_error("index 7 out of bounds"); }),
            Error::Success);
  int after = 0;
  ASSERT_EQ(host::enqueue(s, [&] { after = 42; }), Error::Success);
  EXPECT_EQ(drv->streamSynchronize(s), Error::LaunchFailure);
  EXPECT_EQ(drv->deviceSynchronize(1), Error::LaunchFailure);  // still pending
  EXPECT_EQ(drv->deviceSynchronize(0), Error::Success);        // other device unaffected
  EXPECT_EQ(after, 42);
  EXPECT_NE(drv->lastErrorMessage(1).find("index 7 out of bounds"), std::string::npos);
  EXPECT_EQ(drv->getLastError(1), Error::LaunchFailure);
  EXPECT_EQ(drv->getLastError(1), Error::Success);  // taken
  ASSERT_EQ(host::enqueue(s, [&] { after = 43; }), Error::Success);
  EXPECT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(after, 43);
}

TEST(RuntimeStream, LaunchBlockingRunsOnTheCaller) {
  auto drv = test::hostDriver(1, 1 << 20, /*protect=*/false, /*launch_blocking=*/true);
  Stream s = drv->defaultStream(0);
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  ASSERT_EQ(host::enqueue(s, [&] { ran_on = std::this_thread::get_id(); }), Error::Success);
  EXPECT_EQ(ran_on, caller);  // already done, no synchronize needed
  EXPECT_EQ(host::enqueue(s, [] { throw std::runtime_error("boom"); }), Error::LaunchFailure);
  EXPECT_EQ(drv->getLastError(0), Error::LaunchFailure);
  std::vector<char> h(64, 1), back(64, 0);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 64), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(d, h.data(), 64, MemcpyKind::HostToDevice, s), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(back.data(), d, 64, MemcpyKind::DeviceToHost, s), Error::Success);
  EXPECT_EQ(back, h);
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

// streamWorkCount counts every item queued on the stream, whatever its kind and whether it ran
// on the caller (short work on an idle stream) or on the worker; a wait for a completed event
// queues nothing.
TEST(RuntimeStream, WorkCountCountsEveryQueuedItem) {
  auto drv = test::hostDriver();
  Stream s = nullptr, other = nullptr;
  ASSERT_EQ(drv->streamCreate(0, &s, kLowestPriority), Error::Success);
  ASSERT_EQ(drv->streamCreate(0, &other, kLowestPriority), Error::Success);
  uint64_t n0 = 0, n = 0;
  ASSERT_TRUE(drv->streamWorkCount(s, &n0));
  ASSERT_EQ(host::enqueue(s, [] {}), Error::Success);  // a kernel
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 256), Error::Success);
  ASSERT_EQ(drv->memsetAsync(d, 0, 256, s), Error::Success);  // short: may run on the caller
  Event e = nullptr, done = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &e, kEventDisableTiming), Error::Success);
  ASSERT_EQ(drv->eventCreate(0, &done, kEventDisableTiming), Error::Success);
  ASSERT_EQ(drv->eventRecord(e, s), Error::Success);
  ASSERT_TRUE(drv->streamWorkCount(s, &n));
  EXPECT_EQ(n, n0 + 3);
  // A wait queues an item while the event is pending, none once it completed.
  std::atomic<bool> release{false};
  ASSERT_EQ(host::enqueue(other,
                          [&] {
                            while (!release) std::this_thread::yield();
                          }),
            Error::Success);
  ASSERT_EQ(drv->eventRecord(done, other), Error::Success);
  ASSERT_EQ(drv->streamWaitEvent(s, done), Error::Success);
  ASSERT_TRUE(drv->streamWorkCount(s, &n));
  EXPECT_EQ(n, n0 + 4);
  release = true;
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  ASSERT_EQ(drv->streamWaitEvent(s, done), Error::Success);
  ASSERT_TRUE(drv->streamWorkCount(s, &n));
  EXPECT_EQ(n, n0 + 4);
  for (Event ev : {e, done}) EXPECT_EQ(drv->eventDestroy(ev), Error::Success);
  EXPECT_EQ(drv->free(0, d), Error::Success);
  for (Stream st : {s, other}) EXPECT_EQ(drv->streamDestroy(st), Error::Success);
}

TEST(RuntimeStream, EnqueueRejectsNullArguments) {
  auto drv = test::hostDriver();
  EXPECT_EQ(host::enqueue(nullptr, [] {}), Error::InvalidValue);
  EXPECT_EQ(host::enqueue(drv->defaultStream(0), nullptr), Error::InvalidValue);
}

}  // namespace
}  // namespace accel::rt
