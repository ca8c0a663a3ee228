// Out of memory (retry, search again, the error, recovery), empty_cache, memory_fraction,
// max_split_size, the environment settings and the no-caching mode.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "allocator/caching_allocator.h"
#include "allocator_fake_driver.h"

namespace accel::alloc {
namespace {

using testing::FakeDriver;
constexpr size_t kMiB = size_t{1} << 20;
const rt::Stream s0 = FakeDriver::stream(0);
const rt::Stream s1 = FakeDriver::stream(1);

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(AllocatorOom, FreesCacheAndRetries) {
  FakeDriver driver(48 * kMiB);
  CachingAllocator a(driver, 0);
  void* x = a.malloc(20 * kMiB, s0);
  void* y = a.malloc(20 * kMiB, s0);
  a.free(x);
  a.free(y);
  // Cached on s0 only; s1 needs a segment the driver cannot give until the cache is freed.
  void* z = a.malloc(20 * kMiB, s1);
  ASSERT_NE(z, nullptr);
  DeviceStats st = a.stats();
  EXPECT_EQ(st.num_alloc_retries, 1);
  EXPECT_EQ(st.num_ooms, 0);
  EXPECT_EQ(st.num_device_free, 2);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, int64_t(20 * kMiB));
  EXPECT_GE(driver.deviceSyncs(), 1);
  a.free(z);
}

TEST(AllocatorOom, SearchesAgainAfterSynchronisingEvents) {
  FakeDriver driver(40 * kMiB);
  CachingAllocator a(driver, 0);
  void* x = a.malloc(20 * kMiB, s0);
  void* y = a.malloc(20 * kMiB, s0);
  a.recordStream(x, s1);
  a.free(x);  // held back by an event on s1 that has not completed
  void* z = a.malloc(20 * kMiB, s0);
  EXPECT_EQ(z, x);
  DeviceStats st = a.stats();
  EXPECT_EQ(st.num_alloc_retries, 0);
  EXPECT_EQ(st.num_device_free, 0);
  EXPECT_EQ(st.num_sync_all_streams, 1);
  EXPECT_EQ(driver.liveEvents(), 0u);
  a.free(y);
  a.free(z);
}

TEST(AllocatorOom, ThrowsWithDetailsAndStaysUsable) {
  FakeDriver driver(48 * kMiB);
  CachingAllocator a(driver, 0);
  void* x = a.malloc(30 * kMiB, s0);
  try {
    a.malloc(30 * kMiB, s0);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Tried to allocate 30.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("accel:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("total capacity of 48.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fragmentation"), std::string::npos) << msg;
    EXPECT_NE(msg.find("max_split_size_mb"), std::string::npos) << msg;
  }
  DeviceStats st = a.stats();
  EXPECT_EQ(st.num_ooms, 1);
  EXPECT_EQ(st.num_alloc_retries, 1);
  EXPECT_EQ(st.allocated_bytes[kAggregate].current, int64_t(30 * kMiB));
  void* y = a.malloc(10 * kMiB, s0);
  ASSERT_NE(y, nullptr);
  a.free(x);
  a.free(y);
  void* z = a.malloc(40 * kMiB, s0);  // served once the retry frees the cache
  ASSERT_NE(z, nullptr);
  a.free(z);
  EXPECT_THROW(a.malloc(SIZE_MAX, s0), OutOfMemory);
  EXPECT_EQ(a.stats().num_ooms, 2);
}

TEST(AllocatorOom, MessageReportsFragmentation) {
  FakeDriver driver(20 * kMiB);
  CachingAllocator a(driver, 0);
  // One 20 MiB segment cut in four; freeing every other block leaves 10 MiB free in 5 MiB
  // pieces that cannot serve 6 MiB.
  void* p[4];
  for (auto& ptr : p) ptr = a.malloc(5 * kMiB, s0);
  a.free(p[0]);
  a.free(p[2]);
  try {
    a.malloc(6 * kMiB, s0);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("10.00 MiB is reserved but unallocated"), std::string::npos) << msg;
    EXPECT_NE(msg.find("largest free block 5.00 MiB of 10.00 MiB"), std::string::npos) << msg;
  }
  a.free(p[1]);
  a.free(p[3]);
}

TEST(AllocatorEmptyCache, ReturnsEverySegment) {
  FakeDriver driver(256 * kMiB);
  CachingAllocator a(driver, 0);
  std::vector<void*> ptrs;
  for (size_t size : {size_t{100}, kMiB, 3 * kMiB, 12 * kMiB, size_t{5000}}) {
    ptrs.push_back(a.malloc(size, s0));
    ptrs.push_back(a.malloc(size, s1));
  }
  void* live = a.malloc(700, s0);
  for (void* ptr : ptrs) a.free(ptr);
  a.emptyCache();
  EXPECT_EQ(a.stats().segment[kAggregate].current, 1);  // the one holding `live`
  a.free(live);
  a.emptyCache();
  DeviceStats st = a.stats();
  EXPECT_EQ(st.num_device_alloc, st.num_device_free);
  EXPECT_EQ(driver.mallocs(), driver.frees());
  EXPECT_EQ(driver.used(), 0u);
  EXPECT_TRUE(a.snapshot().empty());
}

TEST(AllocatorFraction, LimitsReservedMemory) {
  FakeDriver driver(100 * kMiB);
  CachingAllocator a(driver, 0);
  EXPECT_THROW(a.setMemoryFraction(0.0), std::invalid_argument);
  EXPECT_THROW(a.setMemoryFraction(1.5), std::invalid_argument);
  a.setMemoryFraction(0.5);
  void* x = a.malloc(20 * kMiB, s0);
  void* y = a.malloc(20 * kMiB, s0);
  try {
    a.malloc(20 * kMiB, s0);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("memory fraction 0.5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(driver.used(), 40 * kMiB);
  a.setMemoryFraction(1.0);
  void* z = a.malloc(20 * kMiB, s0);
  for (void* p : {x, y, z}) a.free(p);
}

TEST(AllocatorMaxSplit, OversizeBlocksAreKeptForOversizeRequests) {
  FakeDriver driver(512 * kMiB);
  CachingAllocator a(driver, 0);
  EXPECT_THROW(a.setMaxSplitSize(20 * kMiB), std::invalid_argument);
  a.setMaxSplitSize(22 * kMiB);
  void* p = a.malloc(50 * kMiB, s0);
  EXPECT_EQ(a.snapshot()[0].blocks.size(), 1u);  // never split
  a.free(p);
  void* q = a.malloc(12 * kMiB, s0);  // may not take the cached oversize block
  EXPECT_NE(q, p);
  a.free(q);
  void* r = a.malloc(24 * kMiB, s0);  // oversize, but 50 MiB wastes 20 MiB or more
  EXPECT_NE(r, p);
  a.free(r);
  void* t = a.malloc(40 * kMiB, s0);  // close enough: reuses the 50 MiB block whole
  EXPECT_EQ(t, p);
  EXPECT_EQ(a.stats().allocated_bytes[kAggregate].current, int64_t(50 * kMiB));
  DeviceStats st = a.stats();
  EXPECT_EQ(driver.mallocs(), 3);
  EXPECT_EQ(st.max_split_size, int64_t(22 * kMiB));
  EXPECT_EQ(st.oversize_segments.current, 2);  // 50 and 24 MiB
  EXPECT_EQ(st.oversize_allocations.current, 1);
  EXPECT_EQ(st.oversize_allocations.allocated, 3);
  a.free(t);
  a.emptyCache();
  EXPECT_EQ(a.stats().oversize_segments.current, 0);
}

TEST(AllocatorConfig, ParsesAllocConf) {
  ScopedEnv env("TORCH_ACCEL_ALLOC_CONF", "max_split_size_mb:64");
  FakeDriver driver(64 * kMiB);
  CachingAllocator a(driver, 0);
  EXPECT_EQ(a.stats().max_split_size, int64_t(64 * kMiB));
}

TEST(AllocatorConfig, RejectsGarbage) {
  FakeDriver driver(64 * kMiB);
  for (const char* bad :
       {"foo:1", "max_split_size_mb", "max_split_size_mb:abc", "max_split_size_mb:-5",
        "max_split_size_mb:20", "max_split_size_mb:64,"}) {
    ScopedEnv env("TORCH_ACCEL_ALLOC_CONF", bad);
    try {
      CachingAllocator a(driver, 0);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("TORCH_ACCEL_ALLOC_CONF"), std::string::npos);
    }
  }
}

TEST(AllocatorNoCaching, EveryMallocGoesToTheDriver) {
  ScopedEnv env("TORCH_ACCEL_NO_CACHING", "1");
  ASSERT_TRUE(cachingDisabled());
  FakeDriver driver(64 * kMiB);
  CachingAllocator a(driver, 0);
  void* p = a.malloc(1000, s0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 512, 0u);
  DeviceStats st = a.stats();
  EXPECT_EQ(st.segment[kSmallPool].current, 1);
  EXPECT_EQ(st.reserved_bytes[kAggregate].current, 1024);
  EXPECT_EQ(st.allocated_bytes[kAggregate].current, 1024);
  a.free(p);
  EXPECT_EQ(driver.frees(), 1);
  EXPECT_EQ(a.stats().reserved_bytes[kAggregate].current, 0);

  // A record_stream use holds the memory until its event completes.
  void* q = a.malloc(3 * kMiB, s0);
  a.recordStream(q, s1);
  a.free(q);
  EXPECT_EQ(driver.frees(), 1);
  driver.completeStream(s1);
  void* r = a.malloc(512, s0);
  EXPECT_EQ(driver.frees(), 2);
  a.free(r);
  EXPECT_EQ(driver.mallocs(), driver.frees());
  EXPECT_EQ(a.stats().num_device_alloc, 3);
}

}  // namespace
}  // namespace accel::alloc
