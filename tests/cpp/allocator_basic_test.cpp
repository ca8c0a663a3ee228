// Sizes, pools, splitting and merging, stream-aware reuse, record_stream, stats, snapshot
// and lookup.
#include <gtest/gtest.h>

#include "allocator/caching_allocator.h"
#include "allocator_fake_driver.h"

namespace accel::alloc {
namespace {

using testing::FakeDriver;
constexpr size_t kMiB = size_t{1} << 20;
const rt::Stream s0 = FakeDriver::stream(0);
const rt::Stream s1 = FakeDriver::stream(1);

TEST(AllocatorSizes, RoundSize) {
  EXPECT_EQ(CachingAllocator::roundSize(1), 512u);
  EXPECT_EQ(CachingAllocator::roundSize(512), 512u);
  EXPECT_EQ(CachingAllocator::roundSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::roundSize(kMiB + 1), kMiB + 512);
}

TEST(AllocatorSizes, SegmentSize) {
  EXPECT_EQ(CachingAllocator::segmentSize(512), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::segmentSize(kMiB), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::segmentSize(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(CachingAllocator::segmentSize(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(CachingAllocator::segmentSize(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(CachingAllocator::segmentSize(11 * kMiB - 512), 12 * kMiB);
}

TEST(AllocatorSizes, PoolChoiceAndAlignment) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  EXPECT_EQ(a.malloc(0, s0), nullptr);
  void* small = a.malloc(kMiB, s0);
  void* large = a.malloc(kMiB + 1, s0);
  void* huge = a.malloc(21 * kMiB, s0);  // too big for the rest of large's segment
  for (void* p : {small, large, huge}) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 512, 0u);
  DeviceStats st = a.stats();
  EXPECT_EQ(st.segment[kSmallPool].current, 1);
  EXPECT_EQ(st.reserved_bytes[kSmallPool].current, int64_t(2 * kMiB));
  EXPECT_EQ(st.segment[kLargePool].current, 2);
  EXPECT_EQ(st.reserved_bytes[kLargePool].current, int64_t(20 * kMiB + 22 * kMiB));
  // The 1 MiB left in the 22 MiB segment is too small to split off.
  EXPECT_EQ(st.allocated_bytes[kLargePool].current, int64_t(kMiB + 512 + 22 * kMiB));
  for (void* p : {small, large, huge}) a.free(p);
}

TEST(AllocatorSplit, TwoBlocksFromOneSegmentMergeBack) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  char* x = static_cast<char*>(a.malloc(1000, s0));
  char* y = static_cast<char*>(a.malloc(3000, s0));
  EXPECT_EQ(driver.mallocs(), 1);
  EXPECT_EQ(y, x + 1024);  // cut from the tail of x's segment
  auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 1u);
  ASSERT_EQ(segs[0].blocks.size(), 3u);
  EXPECT_EQ(segs[0].allocated_size, 1024u + 3072u);
  EXPECT_EQ(a.stats().inactive_split[kAggregate].current, 1);

  a.free(x);
  EXPECT_EQ(a.snapshot()[0].blocks.size(), 3u);  // x cannot merge with allocated y
  EXPECT_EQ(a.stats().inactive_split[kAggregate].current, 2);
  a.free(y);
  segs = a.snapshot();
  ASSERT_EQ(segs.size(), 1u);
  ASSERT_EQ(segs[0].blocks.size(), 1u);
  EXPECT_EQ(segs[0].blocks[0].size, 2 * kMiB);
  EXPECT_FALSE(segs[0].blocks[0].active);
  EXPECT_EQ(a.stats().inactive_split[kAggregate].current, 0);
  EXPECT_EQ(a.stats().inactive_split_bytes[kAggregate].current, 0);
}

TEST(AllocatorSplit, LargeRemainderSplitOnlyAboveOneMiB) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(19 * kMiB, s0);  // remainder 1 MiB: not split
  auto segs = a.snapshot();
  ASSERT_EQ(segs[0].blocks.size(), 1u);
  EXPECT_EQ(segs[0].blocks[0].size, 20 * kMiB);
  EXPECT_EQ(a.stats().allocated_bytes[kAggregate].current, int64_t(20 * kMiB));
  a.free(p);
  p = a.malloc(19 * kMiB - 512, s0);  // remainder above 1 MiB: split
  EXPECT_EQ(a.snapshot()[0].blocks.size(), 2u);
  a.free(p);
  EXPECT_EQ(driver.mallocs(), 1);
}

TEST(AllocatorReuse, SameStreamReusesAtOnce) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(4096, s0);
  a.free(p);
  EXPECT_EQ(a.malloc(4096, s0), p);
  EXPECT_EQ(driver.mallocs(), 1);
}

TEST(AllocatorReuse, OtherStreamGetsItsOwnSegment) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(4096, s0);
  a.free(p);
  void* q = a.malloc(4096, s1);
  EXPECT_NE(q, p);
  EXPECT_EQ(driver.mallocs(), 2);
  auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_NE(segs[0].stream, segs[1].stream);
}

TEST(AllocatorReuse, BestFitPicksSmallestBlock) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* big = a.malloc(8 * kMiB, s0);
  void* keep1 = a.malloc(4 * kMiB, s0);
  void* mid = a.malloc(3 * kMiB, s0);
  void* keep2 = a.malloc(4 * kMiB, s0);
  a.free(big);
  a.free(mid);
  EXPECT_EQ(a.malloc(3 * kMiB, s0), mid);
  a.free(mid);
  for (void* p : {keep1, keep2}) a.free(p);
}

TEST(AllocatorRecordStream, DefersReuseUntilEventCompletes) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(4096, s0);
  a.recordStream(p, s1);
  a.recordStream(p, s1);  // recorded once
  a.recordStream(p, s0);  // the allocation stream: nothing to wait for
  a.free(p);
  EXPECT_EQ(driver.liveEvents(), 1u);
  EXPECT_EQ(a.stats().active[kAggregate].current, 1);
  EXPECT_EQ(a.stats().allocated_bytes[kAggregate].current, 0);
  auto segs = a.snapshot();
  EXPECT_TRUE(segs[0].blocks[0].active);
  EXPECT_FALSE(segs[0].blocks[0].allocated);

  void* q = a.malloc(4096, s0);
  EXPECT_NE(q, p);  // still held back
  driver.completeStream(s1);
  void* r = a.malloc(4096, s0);
  EXPECT_EQ(r, p);  // released by the event check at the start of malloc
  EXPECT_EQ(driver.liveEvents(), 0u);
  a.free(q);
  a.free(r);
  EXPECT_EQ(a.stats().active[kAggregate].current, 0);
}

TEST(AllocatorRecordStream, EmptyCacheSynchronisesPendingFrees) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(4096, s0);
  a.recordStream(p, s1);
  a.free(p);
  a.emptyCache();
  EXPECT_EQ(driver.liveEvents(), 0u);
  EXPECT_EQ(driver.mallocs(), driver.frees());
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, 0);
}

TEST(AllocatorErrors, FreeAndRecordUnknownPointer) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  a.free(nullptr);
  int x = 0;
  EXPECT_THROW(a.free(&x), std::invalid_argument);
  void* p = a.malloc(100, s0);
  EXPECT_THROW(a.free(static_cast<char*>(p) + 512), std::invalid_argument);
  EXPECT_THROW(a.recordStream(&x, s1), std::invalid_argument);
  a.free(p);
  EXPECT_THROW(a.free(p), std::invalid_argument);  // double free
}

TEST(AllocatorLookup, FindsContainingLiveBlock) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  char* p = static_cast<char*>(a.malloc(1000, s0));
  char* q = static_cast<char*>(a.malloc(1000, s0));
  void* base = nullptr;
  size_t size = 0;
  ASSERT_TRUE(a.lookup(p + 999, &base, &size));
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 1024u);
  ASSERT_TRUE(a.lookup(q, &base, &size));
  EXPECT_EQ(base, q);
  EXPECT_FALSE(a.lookup(q + 1024, &base, &size));  // the free tail of the segment
  a.free(p);
  EXPECT_FALSE(a.lookup(p, &base, &size));
  a.free(q);
}

TEST(AllocatorStats, HandComputed) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  void* small = a.malloc(1000, s0);      // 1024 in a 2 MiB segment
  void* large = a.malloc(3 * kMiB, s0);  // 3 MiB in a 20 MiB segment
  DeviceStats st = a.stats();
  EXPECT_EQ(st.allocation[kSmallPool].current, 1);
  EXPECT_EQ(st.allocation[kLargePool].current, 1);
  EXPECT_EQ(st.allocation[kAggregate].current, 2);
  EXPECT_EQ(st.allocated_bytes[kAggregate].current, int64_t(1024 + 3 * kMiB));
  EXPECT_EQ(st.requested_bytes[kAggregate].current, int64_t(1000 + 3 * kMiB));
  EXPECT_EQ(st.active_bytes[kSmallPool].current, 1024);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, int64_t(22 * kMiB));
  EXPECT_EQ(st.segment[kAggregate].current, 2);
  EXPECT_EQ(st.inactive_split[kAggregate].current, 2);
  EXPECT_EQ(st.inactive_split_bytes[kSmallPool].current, int64_t(2 * kMiB - 1024));
  EXPECT_EQ(st.inactive_split_bytes[kLargePool].current, int64_t(17 * kMiB));
  EXPECT_EQ(st.num_device_alloc, 2);
  EXPECT_EQ(st.max_split_size, -1);

  a.free(small);
  a.free(large);
  st = a.stats();
  EXPECT_EQ(st.allocation[kAggregate].current, 0);
  EXPECT_EQ(st.allocation[kAggregate].peak, 2);
  EXPECT_EQ(st.allocation[kAggregate].allocated, 2);
  EXPECT_EQ(st.allocation[kAggregate].freed, 2);
  EXPECT_EQ(st.allocated_bytes[kAggregate].peak, int64_t(1024 + 3 * kMiB));
  EXPECT_EQ(st.requested_bytes[kAggregate].current, 0);
  EXPECT_EQ(st.active[kAggregate].current, 0);
  EXPECT_EQ(st.inactive_split[kAggregate].current, 0);
  EXPECT_EQ(st.inactive_split_bytes[kAggregate].current, 0);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, int64_t(22 * kMiB));

  a.resetPeakStats();
  EXPECT_EQ(a.stats().allocated_bytes[kAggregate].peak, 0);
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].peak, int64_t(22 * kMiB));
  a.resetAccumulatedStats();
  st = a.stats();
  EXPECT_EQ(st.allocation[kAggregate].allocated, 0);
  EXPECT_EQ(st.allocation[kAggregate].freed, 0);
  EXPECT_EQ(st.num_device_alloc, 0);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, int64_t(22 * kMiB));

  a.emptyCache();
  st = a.stats();
  EXPECT_EQ(st.segment[kAggregate].current, 0);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, 0);
  EXPECT_EQ(st.num_device_free, 2);
  EXPECT_EQ(st.num_sync_all_streams, 1);
}

TEST(AllocatorSnapshot, SegmentsInAddressOrder) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  std::vector<void*> ptrs;
  for (int i = 0; i < 4; ++i) ptrs.push_back(a.malloc(kMiB + 1 + i, FakeDriver::stream(i)));
  auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 4u);
  for (size_t i = 1; i < segs.size(); ++i) EXPECT_LT(segs[i - 1].address, segs[i].address);
  for (const auto& seg : segs) {
    EXPECT_TRUE(seg.is_large);
    EXPECT_EQ(seg.total_size, 20 * kMiB);
    ASSERT_EQ(seg.blocks.size(), 2u);
    EXPECT_TRUE(seg.blocks[0].allocated);
    EXPECT_EQ(seg.requested_size, seg.blocks[0].requested_size);
  }
  for (void* p : ptrs) a.free(p);
}

}  // namespace
}  // namespace accel::alloc
