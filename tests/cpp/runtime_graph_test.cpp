// Graph capture and replay on the host driver, and short work run inline on idle streams.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/host_launch.h"
#include "runtime_test_util.h"

namespace accel::rt {
namespace {

using namespace std::chrono_literals;

struct Captured {
  std::unique_ptr<Driver> drv = test::hostDriver();
  Stream s = nullptr;
  Captured() { EXPECT_EQ(drv->streamCreate(0, &s, kLowestPriority), Error::Success); }
  ~Captured() { drv->streamDestroy(s); }
};

TEST(RuntimeGraph, CaptureRecordsAndReplayRunsInOrder) {
  Captured c;
  int64_t value = 1;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  EXPECT_NE(c.drv->streamCaptureId(c.s), 0u);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(host::enqueue(c.s, [&value, i] { value = value * 3 % 1000003 + i; }), Error::Success);
  }
  EXPECT_EQ(value, 1);  // recorded, not run
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  EXPECT_EQ(c.drv->streamCaptureId(c.s), 0u);
  int64_t expected = 1;
  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_EQ(c.drv->graphLaunch(g, c.s), Error::Success);
    for (int i = 0; i < 50; ++i) expected = expected * 3 % 1000003 + i;
  }
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(value, expected);
  // After the capture the stream runs its work again.
  ASSERT_EQ(host::enqueue(c.s, [&value] { value = -1; }), Error::Success);
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(value, -1);
  EXPECT_EQ(c.drv->graphDestroy(g), Error::Success);
}

TEST(RuntimeGraph, CopiesAndMemsetsAreRecorded) {
  Captured c;
  void* dev = nullptr;
  ASSERT_EQ(c.drv->malloc(0, &dev, 64), Error::Success);
  int src = 5, dst = 0;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  ASSERT_EQ(c.drv->memsetAsync(dev, 0, 64, c.s), Error::Success);
  ASSERT_EQ(c.drv->memcpyAsync(dev, &src, sizeof(int), MemcpyKind::HostToDevice, c.s),
            Error::Success);
  ASSERT_EQ(c.drv->memcpyAsync(&dst, dev, sizeof(int), MemcpyKind::DeviceToHost, c.s),
            Error::Success);
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  EXPECT_EQ(dst, 0);
  // A replay reads the host source as it is then, like a CUDA memcpy node.
  src = 9;
  ASSERT_EQ(c.drv->graphLaunch(g, c.s), Error::Success);
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(dst, 9);
  c.drv->graphDestroy(g);
  c.drv->free(0, dev);
}

TEST(RuntimeGraph, DefaultStreamAndNestedCapturesAreRefused) {
  Captured c;
  EXPECT_EQ(c.drv->streamBeginCapture(c.drv->defaultStream(0), CaptureMode::Global),
            Error::NotSupported);
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  EXPECT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::CaptureUnsupported);
  GraphExec g = nullptr;
  EXPECT_EQ(c.drv->streamEndCapture(c.drv->defaultStream(0), &g), Error::InvalidValue);
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  GraphExec none = nullptr;
  EXPECT_EQ(c.drv->streamEndCapture(c.s, &none), Error::InvalidValue);  // nothing to end
  EXPECT_EQ(none, nullptr);
  c.drv->graphDestroy(g);
}

TEST(RuntimeGraph, SynchronizingACapturingStreamInvalidatesTheCapture) {
  Captured c;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  ASSERT_EQ(host::enqueue(c.s, [] {}), Error::Success);
  EXPECT_EQ(c.drv->streamSynchronize(c.s), Error::CaptureUnsupported);
  EXPECT_EQ(host::enqueue(c.s, [] {}), Error::CaptureInvalidated);
  EXPECT_EQ(c.drv->deviceSynchronize(0), Error::CaptureUnsupported);
  GraphExec g = nullptr;
  EXPECT_EQ(c.drv->streamEndCapture(c.s, &g), Error::CaptureInvalidated);
  EXPECT_EQ(g, nullptr);
  // The stream and the device are usable again.
  int ran = 0;
  ASSERT_EQ(host::enqueue(c.s, [&] { ran = 1; }), Error::Success);
  EXPECT_EQ(c.drv->deviceSynchronize(0), Error::Success);
  EXPECT_EQ(ran, 1);
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  c.drv->graphDestroy(g);
}

TEST(RuntimeGraph, EventsJoinStreamsIntoTheCapture) {
  Captured c;
  Stream side = nullptr;
  ASSERT_EQ(c.drv->streamCreate(0, &side, kLowestPriority), Error::Success);
  Event fork = nullptr, join = nullptr;
  ASSERT_EQ(c.drv->eventCreate(0, &fork, kEventDisableTiming), Error::Success);
  ASSERT_EQ(c.drv->eventCreate(0, &join, kEventDisableTiming), Error::Success);
  std::vector<int> order;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  host::enqueue(c.s, [&] { order.push_back(1); });
  ASSERT_EQ(c.drv->eventRecord(fork, c.s), Error::Success);
  ASSERT_EQ(c.drv->streamWaitEvent(side, fork), Error::Success);
  EXPECT_EQ(c.drv->streamCaptureId(side), c.drv->streamCaptureId(c.s));  // joined
  host::enqueue(side, [&] { order.push_back(2); });
  GraphExec g = nullptr;
  // The side stream has not rejoined the origin yet.
  ASSERT_EQ(c.drv->eventRecord(join, side), Error::Success);
  ASSERT_EQ(c.drv->streamWaitEvent(c.s, join), Error::Success);
  host::enqueue(c.s, [&] { order.push_back(3); });
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  EXPECT_EQ(c.drv->streamCaptureId(side), 0u);
  EXPECT_TRUE(order.empty());
  ASSERT_EQ(c.drv->graphLaunch(g, c.s), Error::Success);
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  c.drv->graphDestroy(g);
  c.drv->eventDestroy(fork);
  c.drv->eventDestroy(join);
  c.drv->streamDestroy(side);
}

TEST(RuntimeGraph, AStreamThatNeverRejoinsFailsTheCapture) {
  Captured c;
  Stream side = nullptr;
  ASSERT_EQ(c.drv->streamCreate(0, &side, kLowestPriority), Error::Success);
  Event fork = nullptr;
  ASSERT_EQ(c.drv->eventCreate(0, &fork, kEventDisableTiming), Error::Success);
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  ASSERT_EQ(c.drv->eventRecord(fork, c.s), Error::Success);
  ASSERT_EQ(c.drv->streamWaitEvent(side, fork), Error::Success);
  host::enqueue(side, [] {});
  GraphExec g = nullptr;
  EXPECT_EQ(c.drv->streamEndCapture(c.s, &g), Error::CaptureUnjoined);
  EXPECT_EQ(c.drv->streamCaptureId(side), 0u);  // both streams are free again
  int ran = 0;
  host::enqueue(side, [&] { ran = 1; });
  EXPECT_EQ(c.drv->streamSynchronize(side), Error::Success);
  EXPECT_EQ(ran, 1);
  c.drv->eventDestroy(fork);
  c.drv->streamDestroy(side);
}

TEST(RuntimeGraph, WaitingOnPendingOutsideWorkIsRefused) {
  Captured c;
  Stream other = nullptr;
  ASSERT_EQ(c.drv->streamCreate(0, &other, kLowestPriority), Error::Success);
  Event e = nullptr;
  ASSERT_EQ(c.drv->eventCreate(0, &e, kEventDisableTiming), Error::Success);
  std::atomic<bool> release{false};
  host::enqueue(other, [&] {
    while (!release) std::this_thread::yield();
  });
  ASSERT_EQ(c.drv->eventRecord(e, other), Error::Success);
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  EXPECT_EQ(c.drv->streamWaitEvent(c.s, e), Error::CaptureUnsupported);
  release = true;
  GraphExec g = nullptr;
  EXPECT_EQ(c.drv->streamEndCapture(c.s, &g), Error::CaptureInvalidated);
  EXPECT_EQ(c.drv->streamSynchronize(other), Error::Success);
  // A completed outside event is no dependency at all.
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  EXPECT_EQ(c.drv->streamWaitEvent(c.s, e), Error::Success);
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  c.drv->graphDestroy(g);
  c.drv->eventDestroy(e);
  c.drv->streamDestroy(other);
}

TEST(RuntimeGraph, DestroyingAGraphLeavesQueuedLaunchesIntact) {
  Captured c;
  std::atomic<int> runs{0};
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  host::enqueue(c.s, [&] { runs++; });
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  std::atomic<bool> release{false};
  host::enqueue(c.s, [&] {
    while (!release) std::this_thread::yield();
  });
  for (int i = 0; i < 4; ++i) ASSERT_EQ(c.drv->graphLaunch(g, c.s), Error::Success);
  EXPECT_EQ(c.drv->graphDestroy(g), Error::Success);
  release = true;
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(runs, 4);
}

TEST(RuntimeGraph, AFailingNodeIsTheStickyError) {
  Captured c;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  host::enqueue(c.s, [] { throw std::runtime_error("boom"); });
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  ASSERT_EQ(c.drv->graphLaunch(g, c.s), Error::Success);
  EXPECT_EQ(c.drv->streamSynchronize(c.s), Error::LaunchFailure);
  EXPECT_NE(c.drv->lastErrorMessage(0).find("boom"), std::string::npos);
  EXPECT_EQ(c.drv->getLastError(0), Error::LaunchFailure);
  c.drv->graphDestroy(g);
}

TEST(RuntimeGraph, DebugDumpWritesOneNodePerRecordedItem) {
  Captured c;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  for (int i = 0; i < 3; ++i) host::enqueue(c.s, [] {});
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  const std::string path = testing::TempDir() + "accel_graph_dump.dot";
  ASSERT_EQ(c.drv->graphDebugDump(g, path.c_str()), Error::Success);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("n2 [label"), std::string::npos);
  EXPECT_NE(text.find("n1 -> n2"), std::string::npos);
  EXPECT_EQ(text.find("n3 ["), std::string::npos);
  std::remove(path.c_str());
  c.drv->graphDestroy(g);
}

// ---- short work inline --------------------------------------------------------------------

TEST(RuntimeInline, ShortWorkRunsOnTheCallerWhenIdle) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  std::thread::id ran_on;
  ASSERT_EQ(host::enqueueShort(s, [&] { ran_on = std::this_thread::get_id(); }), Error::Success);
  EXPECT_EQ(ran_on, std::this_thread::get_id());  // done before the launch returned
}

TEST(RuntimeInline, ShortWorkQueuesBehindPendingWork) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  std::atomic<bool> release{false};
  std::vector<int> order;
  host::enqueue(s, [&] {
    while (!release) std::this_thread::yield();
    order.push_back(1);
  });
  std::thread::id ran_on;
  ASSERT_EQ(host::enqueueShort(s,
                               [&] {
                                 ran_on = std::this_thread::get_id();
                                 order.push_back(2);
                               }),
            Error::Success);
  EXPECT_EQ(drv->streamQuery(s), Error::NotReady);
  release = true;
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(RuntimeInline, WorkQueuedDuringAnInlineRunWaitsForIt) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  std::atomic<bool> inside{false}, release{false};
  std::vector<int> order;
  std::thread caller([&] {
    host::enqueueShort(s, [&] {
      inside = true;
      while (!release) std::this_thread::yield();
      order.push_back(1);
    });
  });
  while (!inside) std::this_thread::yield();
  host::enqueue(s, [&] { order.push_back(2); });
  EXPECT_EQ(drv->streamQuery(s), Error::NotReady);
  release = true;
  caller.join();
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(RuntimeInline, AThrowingInlineRunIsTheStickyError) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  EXPECT_EQ(host::enqueueShort(s, [] { throw std::runtime_error("inline boom"); }), Error::Success);
  EXPECT_EQ(drv->streamSynchronize(s), Error::LaunchFailure);
  EXPECT_NE(drv->lastErrorMessage(0).find("inline boom"), std::string::npos);
  EXPECT_EQ(drv->getLastError(0), Error::LaunchFailure);
}

TEST(RuntimeInline, ShortWorkIsRecordedWhileCapturing) {
  Captured c;
  int value = 0;
  ASSERT_EQ(c.drv->streamBeginCapture(c.s, CaptureMode::Global), Error::Success);
  ASSERT_EQ(host::enqueueShort(c.s, [&] { value++; }), Error::Success);
  GraphExec g = nullptr;
  ASSERT_EQ(c.drv->streamEndCapture(c.s, &g), Error::Success);
  EXPECT_EQ(value, 0);
  c.drv->graphLaunch(g, c.s);
  c.drv->graphLaunch(g, c.s);
  ASSERT_EQ(c.drv->streamSynchronize(c.s), Error::Success);
  EXPECT_EQ(value, 2);
  c.drv->graphDestroy(g);
}

// Many threads launch short and queued work on shared streams; every stream keeps its order
// (TSan checks the locking of the inline path).
TEST(RuntimeInline, ConcurrentLaunchersKeepPerThreadOrder) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  constexpr int kThreads = 4, kOps = 2000;
  std::vector<std::vector<int>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        auto work = [&seen, t, i] { seen[t].push_back(i); };
        if (i % 3 == 0) {
          host::enqueue(s, work);
        } else {
          host::enqueueShort(s, work);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kOps));
    for (int i = 0; i < kOps; ++i) ASSERT_EQ(seen[t][i], i);
  }
}

}  // namespace
}  // namespace accel::rt
