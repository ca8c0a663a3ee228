#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/host/host_launch.h"
#include "runtime_test_util.h"

namespace accel::rt {
namespace {

using namespace std::chrono_literals;

TEST(RuntimeEvent, NeverRecordedIsComplete) {
  auto drv = test::hostDriver();
  Event e = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &e, kEventDefault), Error::Success);
  EXPECT_EQ(drv->eventQuery(e), Error::Success);
  EXPECT_EQ(drv->eventSynchronize(e), Error::Success);
  EXPECT_EQ(drv->eventDestroy(e), Error::Success);
}

TEST(RuntimeEvent, QueryAndSynchronizeFollowTheStream) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  Event e = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &e, kEventDefault), Error::Success);
  std::atomic<bool> release{false};
  host::enqueue(s, [&] {
    while (!release) std::this_thread::yield();
  });
  ASSERT_EQ(drv->eventRecord(e, s), Error::Success);
  EXPECT_EQ(drv->eventQuery(e), Error::NotReady);
  release = true;
  EXPECT_EQ(drv->eventSynchronize(e), Error::Success);
  EXPECT_EQ(drv->eventQuery(e), Error::Success);
  // Recording again makes it pending again.
  release = false;
  host::enqueue(s, [&] {
    while (!release) std::this_thread::yield();
  });
  ASSERT_EQ(drv->eventRecord(e, s), Error::Success);
  EXPECT_EQ(drv->eventQuery(e), Error::NotReady);
  release = true;
  EXPECT_EQ(drv->eventSynchronize(e), Error::Success);
  EXPECT_EQ(drv->eventDestroy(e), Error::Success);
}

TEST(RuntimeEvent, ElapsedTimeCoversASleep) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  Event start = nullptr, end = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &start, kEventDefault), Error::Success);
  ASSERT_EQ(drv->eventCreate(0, &end, kEventDefault), Error::Success);
  float ms = -1;
  EXPECT_EQ(drv->eventElapsedTime(&ms, start, end), Error::InvalidValue);  // never recorded
  ASSERT_EQ(drv->eventRecord(start, s), Error::Success);
  host::enqueue(s, [] { std::this_thread::sleep_for(20ms); });
  ASSERT_EQ(drv->eventRecord(end, s), Error::Success);
  EXPECT_EQ(drv->eventElapsedTime(&ms, start, end), Error::NotReady);
  ASSERT_EQ(drv->eventSynchronize(end), Error::Success);
  ASSERT_EQ(drv->eventElapsedTime(&ms, start, end), Error::Success);
  EXPECT_GE(ms, 20.0f);
  EXPECT_LT(ms, 5000.0f);
  drv->eventDestroy(start);
  drv->eventDestroy(end);
}

TEST(RuntimeEvent, DisableTimingRejectsElapsedTime) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  Event a = nullptr, b = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &a, kEventDisableTiming), Error::Success);
  ASSERT_EQ(drv->eventCreate(0, &b, kEventDefault), Error::Success);
  drv->eventRecord(a, s);
  drv->eventRecord(b, s);
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  float ms = 0;
  EXPECT_EQ(drv->eventElapsedTime(&ms, a, b), Error::InvalidValue);
  drv->eventDestroy(a);
  drv->eventDestroy(b);
}

TEST(RuntimeEvent, StreamWaitEventOrdersAcrossStreams) {
  auto drv = test::hostDriver();
  Stream producer = nullptr, consumer = nullptr;
  ASSERT_EQ(drv->streamCreate(0, &producer, 0), Error::Success);
  ASSERT_EQ(drv->streamCreate(1, &consumer, 0), Error::Success);  // across devices too
  Event ready = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &ready, kEventDisableTiming), Error::Success);
  int value = 0;
  int seen = -1;
  host::enqueue(producer, [&] {
    std::this_thread::sleep_for(30ms);
    value = 7;
  });
  ASSERT_EQ(drv->eventRecord(ready, producer), Error::Success);
  ASSERT_EQ(drv->streamWaitEvent(consumer, ready), Error::Success);
  host::enqueue(consumer, [&] { seen = value; });
  // The event may be destroyed while the wait is pending, as in CUDA.
  ASSERT_EQ(drv->eventDestroy(ready), Error::Success);
  ASSERT_EQ(drv->streamSynchronize(consumer), Error::Success);
  EXPECT_EQ(seen, 7);
  // The wait blocked only the consumer: the producer's own later work was never held up.
  EXPECT_EQ(drv->streamDestroy(producer), Error::Success);
  EXPECT_EQ(drv->streamDestroy(consumer), Error::Success);
}

TEST(RuntimeEvent, WaitOnACompletedEventDoesNotBlock) {
  auto drv = test::hostDriver();
  Event e = nullptr;
  ASSERT_EQ(drv->eventCreate(0, &e, kEventDefault), Error::Success);
  Stream s = drv->defaultStream(0);
  ASSERT_EQ(drv->streamWaitEvent(s, e), Error::Success);  // never recorded
  ASSERT_EQ(drv->eventRecord(e, s), Error::Success);
  ASSERT_EQ(drv->eventSynchronize(e), Error::Success);
  ASSERT_EQ(drv->streamWaitEvent(drv->defaultStream(1), e), Error::Success);
  EXPECT_EQ(drv->deviceSynchronize(1), Error::Success);
  drv->eventDestroy(e);
}

}  // namespace
}  // namespace accel::rt
