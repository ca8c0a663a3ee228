// Memory history: the trace of actions in order, contexts kept for live blocks and segments,
// the trace's bound, and the segment that holds a block (what interprocess sharing sends).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "allocator/caching_allocator.h"
#include "allocator_fake_driver.h"

namespace accel::alloc {
namespace {

using testing::FakeDriver;
constexpr size_t kMiB = size_t{1} << 20;
const rt::Stream s0 = FakeDriver::stream(0);
const rt::Stream s1 = FakeDriver::stream(1);

// Each context is the number of the call that gathered it.
HistoryConfig counting(int* calls, bool trace = true) {
  HistoryConfig c;
  c.enabled = true;
  c.trace = trace;
  c.trace_contexts = true;
  c.recorder = [calls] { return std::make_shared<int>(++*calls); };
  return c;
}

int contextOf(const std::shared_ptr<void>& ctx) { return ctx ? *static_cast<int*>(ctx.get()) : 0; }

TEST(AllocatorHistory, TraceListsActionsInOrder) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  int calls = 0;
  a.setHistory(counting(&calls), /*clear_trace=*/true);
  void* p = a.malloc(1000, s0);
  void* q = a.malloc(3 * kMiB, s0);
  a.recordStream(q, s1);
  a.free(p);
  a.free(q);  // deferred: waits for the event on s1
  driver.completeAll();
  a.emptyCache();
  std::vector<std::pair<TraceEntry::Action, size_t>> seen;
  for (const TraceEntry& e : a.trace()) seen.emplace_back(e.action, e.size);
  using A = TraceEntry;
  const std::vector<std::pair<TraceEntry::Action, size_t>> expected = {
      {A::kSegmentAlloc, 2 * kMiB},  {A::kAlloc, 1000},
      {A::kSegmentAlloc, 20 * kMiB}, {A::kAlloc, 3 * kMiB},
      {A::kFreeRequested, 1000},     {A::kFreeCompleted, 1000},
      {A::kFreeRequested, 3 * kMiB}, {A::kFreeCompleted, 3 * kMiB},
      {A::kSegmentFree, 2 * kMiB},   {A::kSegmentFree, 20 * kMiB}};
  // The two segment frees come in pool order; compare them as a set.
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i + 2 < seen.size(); ++i) EXPECT_EQ(seen[i], expected[i]) << i;
  EXPECT_TRUE(std::is_permutation(seen.end() - 2, seen.end(), expected.end() - 2));
  const auto trace = a.trace();
  EXPECT_EQ(trace[1].addr, reinterpret_cast<uintptr_t>(p));
  EXPECT_EQ(trace[1].stream, reinterpret_cast<uintptr_t>(s0));
  EXPECT_EQ(contextOf(trace[1].context), 1);  // the alloc carries its context
  EXPECT_EQ(contextOf(trace[4].context), 0);  // frees do not, unless asked
  for (size_t i = 1; i < trace.size(); ++i) EXPECT_GE(trace[i].time_us, trace[i - 1].time_us);
}

TEST(AllocatorHistory, SnapshotKeepsContextsOfLiveBlocksAndSegments) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  int calls = 0;
  a.setHistory(counting(&calls, /*trace=*/false), true);
  void* p = a.malloc(1000, s0);  // context 1: the segment's and the block's
  void* q = a.malloc(2000, s0);  // context 2
  a.free(p);                     // the segment's first block is free now
  EXPECT_TRUE(a.trace().empty());
  auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(contextOf(segs[0].context), 1);
  ASSERT_GE(segs[0].blocks.size(), 2u);
  EXPECT_EQ(contextOf(segs[0].blocks[0].context), 0);  // freed: no context
  EXPECT_EQ(contextOf(segs[0].blocks[1].context), 2);
  a.free(q);  // merges back into one block: the segment keeps its context
  segs = a.snapshot();
  ASSERT_EQ(segs[0].blocks.size(), 1u);
  EXPECT_EQ(contextOf(segs[0].context), 1);
  a.setHistory(HistoryConfig{}, true);
  void* r = a.malloc(1000, s0);
  EXPECT_EQ(calls, 2);  // stopped: no more contexts gathered
  EXPECT_EQ(contextOf(a.snapshot()[0].blocks[0].context), 0);
  a.free(r);
}

TEST(AllocatorHistory, TraceKeepsTheNewestEntries) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  HistoryConfig c;
  c.enabled = c.trace = true;
  c.max_entries = 3;
  a.setHistory(c, true);
  for (int i = 0; i < 5; ++i) a.free(a.malloc(512 * (i + 1), s0));
  const auto trace = a.trace();
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.back().action, TraceEntry::kFreeCompleted);
  EXPECT_EQ(trace.back().size, 2560u);
}

TEST(AllocatorHistory, OomIsTraced) {
  FakeDriver driver(8 * kMiB);
  CachingAllocator a(driver, 0);
  HistoryConfig c;
  c.enabled = c.trace = true;
  a.setHistory(c, true);
  EXPECT_THROW(a.malloc(64 * kMiB, s0), OutOfMemory);
  const auto trace = a.trace();
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.back().action, TraceEntry::kOom);
  EXPECT_EQ(trace.back().size, 64 * kMiB);
}

TEST(AllocatorSegments, SegmentOfALiveBlock) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  char* p = static_cast<char*>(a.malloc(1000, s0));
  char* q = static_cast<char*>(a.malloc(1000, s0));  // same 2 MiB segment, after p
  void* base = nullptr;
  size_t size = 0;
  ASSERT_TRUE(a.segmentOf(q + 10, &base, &size));
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 2 * kMiB);
  a.free(q);
  EXPECT_FALSE(a.segmentOf(q, &base, &size));
  a.free(p);
  EXPECT_EQ(a.memoryFraction(), 1.0);
  a.setMemoryFraction(0.25);
  EXPECT_EQ(a.memoryFraction(), 0.25);
}

}  // namespace
}  // namespace accel::alloc
