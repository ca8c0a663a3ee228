#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/host/parallel.h"

namespace accel::rt::host {
namespace {

// Counts how often each index of [0, n) is visited.
std::vector<int> visits(int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> counts(n);
  parallelFor(0, n, grain, [&](int64_t b, int64_t e) {
    ASSERT_LT(b, e);
    for (int64_t i = b; i < e; ++i) ++counts[i];
  });
  return std::vector<int>(counts.begin(), counts.end());
}

TEST(RuntimeParallel, EachIndexExactlyOnce) {
  EXPECT_GE(numThreads(), 1);
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    for (int64_t grain : {1, 16, 4096}) {
      EXPECT_EQ(visits(n, grain), std::vector<int>(n, 1)) << "n=" << n << " grain=" << grain;
    }
  }
}

TEST(RuntimeParallel, SmallRangeRunsInlineAsOneCall) {
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  parallelFor(10, 20, 10, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 10);
    EXPECT_EQ(e, 20);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(calls, 1);
}

TEST(RuntimeParallel, ConcurrentAndNestedCalls) {
  constexpr int64_t n = 20000;
  std::vector<std::thread> callers;
  std::vector<std::vector<int>> results(4);
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      std::vector<std::atomic<int>> counts(n);
      parallelFor(0, n / 100, 1, [&](int64_t b, int64_t e) {
        for (int64_t outer = b; outer < e; ++outer) {
          parallelFor(outer * 100, outer * 100 + 100, 1, [&](int64_t ib, int64_t ie) {
            for (int64_t i = ib; i < ie; ++i) ++counts[i];
          });
        }
      });
      results[t].assign(counts.begin(), counts.end());
    });
  }
  for (auto& c : callers) c.join();
  for (const auto& r : results) EXPECT_EQ(r, std::vector<int>(n, 1));
}

TEST(RuntimeParallel, ExceptionReachesTheCaller) {
  EXPECT_THROW(parallelFor(0, 100000, 1,
                           [](int64_t b, int64_t e) {
                             if (b <= 5000 && 5000 < e) throw std::out_of_range("index 5000");
                           }),
               std::out_of_range);
  EXPECT_EQ(visits(1000, 1), std::vector<int>(1000, 1));  // the pool is still usable
}

}  // namespace
}  // namespace accel::rt::host
