// Randomised operation sequences checked against a shadow model, and a multi-threaded stress.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
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

// A reusable barrier whose last arrival runs `check` while every other thread waits.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void arriveAndWait(const std::function<void()>& check) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t gen = generation_;
    if (++arrived_ == n_) {
      check();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen; });
  }

 private:
  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

// In the worker threads: a failed check stops the process at once (a thread that returned
// early would leave the others waiting in the barrier forever).
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      ADD_FAILURE() << "check failed: " #cond " (thread " << t << ", op " << op << ")"; \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

// ACCEL_FUZZ_OPS scales the run (the sanitizer builds use fewer operations).
int64_t fuzzOps(int64_t dflt) {
  const char* v = std::getenv("ACCEL_FUZZ_OPS");
  return v != nullptr && *v != '\0' ? std::atoll(v) : dflt;
}

// Several threads malloc, record_stream, free and complete streams concurrently on one
// allocator. A shadow model shared by the threads (under its own lock) knows every live range
// and every freed range still waiting on events, and the test owns event completion
// (FakeDriver::completeStream), so "reused before its events completed" is observable.
// Capacity is far above what the threads hold: the slow path (which synchronises every
// pending event behind the model's back) must never run, and the end checks prove it did not.
TEST(AllocatorFuzz, ThreadsAndStreamsShadowModel) {
  constexpr int kThreads = 4;
  constexpr int kStreams = 4;
  constexpr int kPhase = 5000;  // operations per thread between whole-model checks
  constexpr size_t kMaxLive = 32;
  const int64_t per_thread = std::max<int64_t>(kPhase, fuzzOps(1000000) / kThreads);
  FakeDriver driver(size_t{16} << 30);
  CachingAllocator a(driver, 0);
  rt::Stream streams[kStreams];
  for (int s = 0; s < kStreams; ++s) streams[s] = FakeDriver::stream(s);

  struct Range {
    size_t size;
  };
  struct Pending {
    size_t size;
    size_t requested;
    std::vector<std::pair<int, uint64_t>> waits;  // (stream, its epoch when freed)
  };
  std::mutex model_mu;
  std::map<char*, Range> live;
  std::map<char*, Pending> held;
  uint64_t epoch[kStreams] = {};
  int64_t live_bytes = 0, requested_bytes = 0, mallocs = 0, frees = 0;

  const auto overlaps = [&](char* p, size_t size) {  // model_mu held
    auto l = live.lower_bound(p + size);
    if (l != live.begin() && std::prev(l)->first + std::prev(l)->second.size > p) return true;
    auto h = held.lower_bound(p + size);
    return h != held.begin() && std::prev(h)->first + std::prev(h)->second.size > p;
  };
  const auto releaseHeld = [&] {  // model_mu held
    for (auto it = held.begin(); it != held.end();) {
      bool done = true;
      for (auto [s, e] : it->second.waits) done = done && epoch[s] > e;
      it = done ? held.erase(it) : std::next(it);
    }
  };

  int phase = 0;
  // Every thread is parked in the barrier: the allocator's stats must equal the model's.
  const auto checkModel = [&] {
    std::lock_guard<std::mutex> lock(model_mu);
    const DeviceStats st = a.stats();
    EXPECT_EQ(st.allocation[kAggregate].current, int64_t(live.size()));
    EXPECT_EQ(st.allocation[kAggregate].allocated, mallocs);
    EXPECT_EQ(st.allocation[kAggregate].freed, frees);
    EXPECT_EQ(st.allocated_bytes[kAggregate].current, live_bytes);
    // A freed block stays active (and its request counted) until the allocator sees its events
    // complete (at its next malloc, which this probe is). Every block the model still holds back
    // must be active; a block whose stream completed between the model's note and the free may be
    // too.
    void* probe = a.malloc(1, streams[0]);
    a.free(probe);
    ++mallocs;
    ++frees;
    int64_t held_bytes = 0, held_requested = 0;
    for (auto& [p, h] : held) {
      held_bytes += int64_t(h.size);
      held_requested += int64_t(h.requested);
    }
    const DeviceStats probed = a.stats();
    EXPECT_GE(probed.active_bytes[kAggregate].current, live_bytes + held_bytes);
    EXPECT_GE(probed.requested_bytes[kAggregate].current, requested_bytes + held_requested);
    EXPECT_EQ(st.reserved_bytes[kAggregate].current, int64_t(driver.used()));
    EXPECT_EQ(st.segment[kAggregate].current, driver.mallocs() - driver.frees());
    EXPECT_EQ(st.num_device_alloc, driver.mallocs());
    EXPECT_EQ(st.num_device_free, driver.frees());
    for (int t = 0; t < kNumStatTypes; ++t) {
      EXPECT_LE(st.allocated_bytes[t].current, st.active_bytes[t].current);
      EXPECT_LE(st.active_bytes[t].current, st.reserved_bytes[t].current);
    }
    if (++phase % 8 == 0) {
      a.emptyCache();  // synchronises pending events: nothing is held back any more
      held.clear();
      const DeviceStats after = a.stats();
      EXPECT_EQ(after.active_bytes[kAggregate].current, live_bytes);
      EXPECT_EQ(after.requested_bytes[kAggregate].current, requested_bytes);
      EXPECT_EQ(after.reserved_bytes[kAggregate].current, int64_t(driver.used()));
    }
  };

  Barrier barrier(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      struct Mine {
        char* p;
        size_t requested;
        size_t size;
        uint8_t tag;
        std::vector<int> uses;
        int stream;
      };
      std::vector<Mine> mine;
      for (int64_t op = 0; op < per_thread; ++op) {
        if (op % kPhase == kPhase - 1) barrier.arriveAndWait(checkModel);
        const int kind = int(rng() % 100);
        if (kind < 45 && mine.size() < kMaxLive) {
          // Mostly small requests, some large ones, a few above the 10 MiB rounding threshold.
          const int k = int(rng() % 100);
          const size_t size = k < 75   ? 1 + rng() % kMiB
                              : k < 97 ? kMiB + 1 + rng() % (8 * kMiB)
                                       : 1 + rng() % (24 * kMiB);
          const int s = int(rng() % kStreams);
          char* p = static_cast<char*>(a.malloc(size, streams[s]));
          size_t block = 0;
          {
            std::lock_guard<std::mutex> lock(model_mu);
            FUZZ_CHECK(reinterpret_cast<uintptr_t>(p) % 512 == 0);
            void* base = nullptr;
            FUZZ_CHECK(a.lookup(p + size - 1, &base, &block));
            FUZZ_CHECK(base == p);
            FUZZ_CHECK(block >= CachingAllocator::roundSize(size));
            FUZZ_CHECK(!overlaps(p, block));
            live.emplace(p, Range{block});
            live_bytes += int64_t(block);
            requested_bytes += int64_t(size);
            ++mallocs;
          }
          const auto tag = uint8_t(t * 64 + op % 64);
          stamp(p, size, tag);
          mine.push_back(Mine{p, size, block, tag, {}, s});
        } else if (kind < 92 && !mine.empty()) {
          const size_t i = rng() % mine.size();
          Mine& m = mine[i];
          FUZZ_CHECK(stampIntact(m.p, m.requested, m.tag));
          if (kind < 60) {  // a use on another stream, as tensor.record_stream(s)
            const int s = int(rng() % kStreams);
            a.recordStream(m.p, streams[s]);
            if (s != m.stream && std::find(m.uses.begin(), m.uses.end(), s) == m.uses.end()) {
              m.uses.push_back(s);
            }
            continue;
          }
          {
            // The model forgets the range before the allocator may hand it out again, and
            // notes the epochs its events must pass before the free.
            std::lock_guard<std::mutex> lock(model_mu);
            live.erase(m.p);
            live_bytes -= int64_t(m.size);
            requested_bytes -= int64_t(m.requested);
            ++frees;
            if (!m.uses.empty()) {
              Pending h{m.size, m.requested, {}};
              for (int s : m.uses) h.waits.emplace_back(s, epoch[s]);
              held.emplace(m.p, std::move(h));
            }
          }
          a.free(m.p);
          if (i + 1 != mine.size()) mine[i] = std::move(mine.back());
          mine.pop_back();
        } else {
          // The streams reach their recorded events: the model releases what waited on them.
          const int s = int(rng() % kStreams);
          std::lock_guard<std::mutex> lock(model_mu);
          driver.completeStream(streams[s]);
          ++epoch[s];
          releaseHeld();
        }
      }
      barrier.arriveAndWait(checkModel);
      const int64_t op = per_thread;
      for (Mine& m : mine) {
        FUZZ_CHECK(stampIntact(m.p, m.requested, m.tag));
        {
          std::lock_guard<std::mutex> lock(model_mu);
          live.erase(m.p);
          live_bytes -= int64_t(m.size);
          requested_bytes -= int64_t(m.requested);
          ++frees;
        }
        a.free(m.p);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  driver.completeAll();
  a.emptyCache();
  const DeviceStats st = a.stats();
  EXPECT_EQ(st.allocation[kAggregate].allocated, mallocs);
  EXPECT_EQ(st.allocation[kAggregate].freed, frees);
  EXPECT_GE(mallocs, per_thread * kThreads / 4);  // the run did what it claims
  EXPECT_EQ(st.num_device_alloc, st.num_device_free);
  EXPECT_EQ(driver.mallocs(), driver.frees());
  EXPECT_EQ(driver.liveEvents(), 0u);
  for (const StatArray* array : {&st.allocated_bytes, &st.reserved_bytes, &st.active_bytes,
                                 &st.requested_bytes, &st.inactive_split_bytes}) {
    for (const Stat& stat : *array) EXPECT_EQ(stat.current, 0);
  }
  // The slow path never ran, so every "held" check above was a real one.
  EXPECT_EQ(st.num_alloc_retries, 0);
  EXPECT_EQ(st.num_ooms, 0);
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
