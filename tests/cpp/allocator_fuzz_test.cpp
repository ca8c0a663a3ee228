// Randomised operation sequences checked against a shadow model, and a multi-threaded stress.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include "allocator/caching_allocator.h"
#include "allocator_fake_driver.h"

namespace accel::alloc {
namespace {

using testing::FakeDriver;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kPattern = 64;  // bytes stamped at each end of a block

void stamp(char* p, size_t size, uint8_t tag) {
  const size_t n = std::min(size, kPattern);
  std::memset(p, tag, n);
  std::memset(p + size - n, tag, n);
}

bool stampIntact(const char* p, size_t size, uint8_t tag) {
  const size_t n = std::min(size, kPattern);
  for (size_t i = 0; i < n; ++i) {
    if (uint8_t(p[i]) != tag || uint8_t(p[size - 1 - i]) != tag) return false;
  }
  return true;
}

// Mostly small requests, some large ones, a few above the 10 MiB rounding threshold.
size_t randomSize(std::mt19937_64& rng) {
  const int kind = int(rng() % 100);
  if (kind < 70) return 1 + rng() % kMiB;
  if (kind < 95) return kMiB + 1 + rng() % (11 * kMiB);
  return 1 + rng() % (30 * kMiB);
}

struct Live {
  size_t requested;
  size_t block_size;
  rt::Stream stream;
  uint8_t tag;
  std::vector<rt::Stream> uses;
};

// A freed block still waiting on record_stream events: the epoch of each stream at free.
struct Held {
  size_t size;
  std::vector<std::pair<int, uint64_t>> waits;
};

TEST(AllocatorFuzz, ShadowModel) {
  FakeDriver driver(1024 * kMiB);
  CachingAllocator a(driver, 0);
  std::mt19937_64 rng(12345);
  const rt::Stream streams[3] = {FakeDriver::stream(0), FakeDriver::stream(1),
                                 FakeDriver::stream(2)};
  uint64_t epoch[3] = {0, 0, 0};  // bumped each time a stream's events are completed
  std::map<char*, Live> live;
  std::map<char*, Held> held;
  int64_t live_bytes = 0;
  int64_t ooms = 0;

  const auto overlapsAny = [&](char* p, size_t size) {
    auto l = live.lower_bound(p + size);
    if (l != live.begin() && std::prev(l)->first + std::prev(l)->second.block_size > p) return true;
    auto h = held.lower_bound(p + size);
    return h != held.begin() && std::prev(h)->first + std::prev(h)->second.size > p;
  };
  const auto streamIndex = [&](rt::Stream s) {
    return int(std::find(streams, streams + 3, s) - streams);
  };
  const auto releaseHeld = [&]() {
    for (auto it = held.begin(); it != held.end();) {
      bool done = true;
      for (auto [s, e] : it->second.waits) done = done && epoch[s] > e;
      it = done ? held.erase(it) : std::next(it);
    }
  };

  for (int op = 0; op < 200000; ++op) {
    const int kind = int(rng() % 1000);
    if (kind < 450 && live.size() < 300) {
      const size_t size = randomSize(rng);
      const rt::Stream stream = streams[rng() % 3];
      const int64_t syncs = a.stats().num_sync_all_streams;
      char* p = nullptr;
      try {
        p = static_cast<char*>(a.malloc(size, stream));
      } catch (const OutOfMemory&) {
        ++ooms;
      }
      // A slow path synchronised every pending event: nothing is held back any more.
      if (a.stats().num_sync_all_streams != syncs) held.clear();
      if (p == nullptr) continue;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 512, 0u);
      void* base = nullptr;
      size_t block_size = 0;
      ASSERT_TRUE(a.lookup(p + size - 1, &base, &block_size));
      ASSERT_EQ(base, p);
      const size_t rounded = CachingAllocator::roundSize(size);
      ASSERT_GE(block_size, rounded);
      ASSERT_LE(block_size, rounded + kMiB);  // large-pool tails of 1 MiB or less stay attached
      ASSERT_FALSE(overlapsAny(p, block_size)) << "op " << op;
      const auto tag = uint8_t(op);
      stamp(p, size, tag);
      live.emplace(p, Live{size, block_size, stream, tag, {}});
      live_bytes += int64_t(block_size);
    } else if (kind < 900 && !live.empty()) {
      auto it = std::next(live.begin(), int(rng() % live.size()));
      auto& [p, block] = *it;
      ASSERT_TRUE(stampIntact(p, block.requested, block.tag)) << "op " << op;
      if (kind < 550) {  // record a use on a random stream instead of freeing
        const rt::Stream s = streams[rng() % 3];
        a.recordStream(p, s);
        auto& uses = block.uses;
        if (s != block.stream && std::find(uses.begin(), uses.end(), s) == uses.end()) {
          uses.push_back(s);
        }
        continue;
      }
      a.free(p);
      live_bytes -= int64_t(block.block_size);
      if (!block.uses.empty()) {
        Held h{block.block_size, {}};
        for (rt::Stream s : block.uses) h.waits.emplace_back(streamIndex(s), epoch[streamIndex(s)]);
        held.emplace(p, h);
      }
      live.erase(it);
    } else if (kind < 995) {
      const int s = int(rng() % 3);
      driver.completeStream(streams[s]);
      ++epoch[s];
      releaseHeld();  // the allocator may hand these out from its next malloc on
    } else {
      a.emptyCache();
      held.clear();
    }
    const DeviceStats st = a.stats();
    ASSERT_EQ(st.allocated_bytes[kAggregate].current, live_bytes) << "op " << op;
    ASSERT_EQ(st.allocation[kAggregate].current, int64_t(live.size()));
  }

  for (auto& [p, block] : live) {
    ASSERT_TRUE(stampIntact(p, block.requested, block.tag));
    a.free(p);
  }
  a.emptyCache();
  const DeviceStats st = a.stats();
  EXPECT_EQ(st.num_device_alloc, st.num_device_free);
  EXPECT_EQ(driver.mallocs(), driver.frees());
  EXPECT_EQ(driver.liveEvents(), 0u);
  for (const StatArray* array : {&st.allocated_bytes, &st.reserved_bytes, &st.active_bytes,
                                 &st.requested_bytes, &st.inactive_split_bytes}) {
    for (const Stat& stat : *array) EXPECT_EQ(stat.current, 0);
  }
  EXPECT_EQ(st.num_ooms, ooms);
}

TEST(AllocatorStress, FourThreads) {
  FakeDriver driver(1024 * kMiB);
  CachingAllocator a(driver, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      std::mt19937_64 rng(t);
      // Two threads share a stream, so blocks move between threads through the cache.
      const rt::Stream stream = FakeDriver::stream(t / 2);
      std::vector<std::pair<char*, size_t>> mine;
      for (int i = 0; i < 20000; ++i) {
        if (mine.size() < 16 && rng() % 2 == 0) {
          const size_t size = 1 + rng() % (rng() % 8 == 0 ? 4 * kMiB : 64 * 1024);
          char* p = static_cast<char*>(a.malloc(size, stream));
          stamp(p, size, uint8_t(t + 1));
          mine.emplace_back(p, size);
        } else if (!mine.empty()) {
          auto [p, size] = mine.back();
          mine.pop_back();
          EXPECT_TRUE(stampIntact(p, size, uint8_t(t + 1)));
          a.free(p);
        }
      }
      for (auto [p, size] : mine) {
        EXPECT_TRUE(stampIntact(p, size, uint8_t(t + 1)));
        a.free(p);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(a.stats().allocation[kAggregate].current, 0);
  EXPECT_EQ(a.stats().active_bytes[kAggregate].current, 0);
  a.emptyCache();
  EXPECT_EQ(driver.mallocs(), driver.frees());
}

}  // namespace
}  // namespace accel::alloc
