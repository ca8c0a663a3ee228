// Median cost of one malloc+free pair of the caching allocator over the host driver, per size.
// Run it twice (with and without TORCH_ACCEL_NO_CACHING=1) to get the cached/uncached ratio;
// benchmarks/allocator.py does that and prints the ratio. Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "allocator/caching_allocator.h"
#include "runtime/host/host_driver.h"

int main() {
  using Clock = std::chrono::steady_clock;
  auto driver = accel::rt::host::makeHostDriver(accel::rt::host::hostConfigFromEnv());
  accel::alloc::CachingAllocator allocator(*driver, 0);
  accel::rt::Stream stream = driver->defaultStream(0);
  const size_t sizes[] = {512, 4096, 65536, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
  std::printf("{\"caching\": %s, \"median_ns\": {", accel::alloc::cachingDisabled() ? "false" : "true");
  bool first = true;
  for (size_t size : sizes) {
    // Big uncached sizes cost milliseconds (mmap + page faults): fewer pairs suffice.
    const int pairs = size >= (1 << 20) && accel::alloc::cachingDisabled() ? 200 : 20000;
    const int batch = 100;
    std::vector<double> per_pair;
    for (int rep = 0; rep < pairs / batch; ++rep) {
      auto t0 = Clock::now();
      for (int i = 0; i < batch; ++i) allocator.free(allocator.malloc(size, stream));
      per_pair.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / batch);
    }
    std::nth_element(per_pair.begin(), per_pair.begin() + per_pair.size() / 2, per_pair.end());
    std::printf("%s\"%zu\": %.1f", first ? "" : ", ", size, per_pair[per_pair.size() / 2]);
    first = false;
  }
  std::printf("}}\n");
  return 0;
}
