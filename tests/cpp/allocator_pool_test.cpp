// Private pools (graph pools, MemPool): routing, isolation, sharing, release, deferred frees.
#include <gtest/gtest.h>

#include <thread>

#include "allocator/caching_allocator.h"
#include "allocator_fake_driver.h"

namespace accel::alloc {
namespace {

using testing::FakeDriver;
constexpr size_t kMiB = size_t{1} << 20;
const rt::Stream s0 = FakeDriver::stream(0);
const rt::Stream s1 = FakeDriver::stream(1);
const PoolId kPool{0, 7};

StreamFilter onStream(rt::Stream s) {
  return [s](rt::Stream t) { return t == s; };
}

TEST(AllocatorPool, RoutedAllocationsUseTheirOwnSegments) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* outside = a.malloc(1000, s0);
  a.beginAllocateToPool(kPool, onStream(s1));
  EXPECT_EQ(a.poolUseCount(kPool), 1);
  void* inside = a.malloc(1000, s1);
  void* unrouted = a.malloc(1000, s0);  // other streams keep the shared pools
  a.endAllocateToPool(kPool);
  EXPECT_EQ(driver.mallocs(), 2);  // one shared small segment, one of the pool
  EXPECT_EQ(unrouted, static_cast<char*>(outside) + 1024);
  // A block freed into the pool is not handed to unrouted allocations on its stream.
  a.free(inside);
  void* later = a.malloc(1000, s1);
  EXPECT_NE(later, inside);
  EXPECT_EQ(driver.mallocs(), 3);
  // Routed again, the pool serves it from its cache.
  a.beginAllocateToPool(kPool, onStream(s1));
  void* again = a.malloc(1000, s1);
  a.endAllocateToPool(kPool);
  EXPECT_EQ(again, inside);
  EXPECT_EQ(driver.mallocs(), 3);
  for (void* p : {outside, unrouted, later, again}) a.free(p);
  a.releasePool(kPool);
  a.releasePool(kPool);
  EXPECT_EQ(a.poolUseCount(kPool), 0);
  a.emptyCache();
  EXPECT_EQ(driver.used(), 0u);
}

TEST(AllocatorPool, APoolStaysWhileReferencedAndIsFreedAfter) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.createOrIncrefPool(kPool);
  a.beginAllocateToPool(kPool, onStream(s0));
  EXPECT_EQ(a.poolUseCount(kPool), 2);
  void* p = a.malloc(4 * kMiB, s0);
  a.endAllocateToPool(kPool);
  a.free(p);
  a.emptyCache();  // referenced: its segment stays
  EXPECT_EQ(driver.frees(), 0);
  a.releasePool(kPool);
  a.releasePool(kPool);
  EXPECT_EQ(a.poolUseCount(kPool), 0);
  a.emptyCache();
  EXPECT_EQ(driver.frees(), 1);
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, 0);
  EXPECT_THROW(a.releasePool(kPool), std::invalid_argument);
}

TEST(AllocatorPool, LiveBlocksOfAReleasedPoolReturnWhenFreed) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.beginAllocateToPool(kPool, onStream(s0));
  void* output = a.malloc(1000, s0);  // a graph's output, alive after the graph is gone
  a.endAllocateToPool(kPool);
  a.releasePool(kPool);
  a.emptyCache();
  EXPECT_EQ(driver.frees(), 0);
  a.free(output);
  a.emptyCache();
  EXPECT_EQ(driver.frees(), 1);
}

TEST(AllocatorPool, OneRoutePerPoolAtATime) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.beginAllocateToPool(kPool, onStream(s0));
  EXPECT_THROW(a.beginAllocateToPool(kPool, onStream(s1)), std::invalid_argument);
  a.endAllocateToPool(kPool);
  EXPECT_THROW(a.endAllocateToPool(kPool), std::invalid_argument);
  a.releasePool(kPool);
}

TEST(AllocatorPool, CrossStreamFreesWaitForTheLastRouteToEnd) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.beginAllocateToPool(kPool, onStream(s0));
  void* p = a.malloc(1000, s0);
  a.recordStream(p, s1);
  a.free(p);
  EXPECT_EQ(driver.liveEvents(), 0u);  // no event recorded during the capture
  EXPECT_EQ(a.stats().active[kAggregate].current, 1);
  a.endAllocateToPool(kPool);
  EXPECT_EQ(driver.liveEvents(), 1u);  // recorded now
  driver.completeAll();
  a.beginAllocateToPool(kPool, onStream(s0));
  a.endAllocateToPool(kPool);
  void* q = a.malloc(1000, s1);  // processes the completed event
  EXPECT_EQ(a.stats().active[kAggregate].current, 1);
  a.free(q);
  a.releasePool(kPool);
  a.releasePool(kPool);
}

TEST(AllocatorPool, AThreadFilterRoutesOnlyThatThread) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  const auto me = std::this_thread::get_id();
  a.beginAllocateToPool(kPool, [me](rt::Stream) { return std::this_thread::get_id() == me; });
  void* mine = a.malloc(1000, s0);
  void* theirs = nullptr;
  std::thread([&] { theirs = a.malloc(1000, s0); }).join();
  a.endAllocateToPool(kPool);
  EXPECT_EQ(driver.mallocs(), 2);  // different segments
  auto segments = a.snapshot();
  EXPECT_EQ(segments.size(), 2u);
  a.free(mine);
  a.free(theirs);
  a.releasePool(kPool);
  a.emptyCache();
  EXPECT_EQ(driver.used(), 0u);
}

TEST(AllocatorPool, SnapshotShowsCachedBlocksOfPools) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.beginAllocateToPool(kPool, onStream(s0));
  a.free(a.malloc(1000, s0));
  a.endAllocateToPool(kPool);
  auto segments = a.snapshot();
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].allocated_size, 0u);
  EXPECT_EQ(segments[0].total_size, 2 * kMiB);
  a.releasePool(kPool);
}

}  // namespace
}  // namespace accel::alloc
