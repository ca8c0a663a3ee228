// Page-locked host buffers that stage accel memory for a transport working on host memory
// (gloo on the host driver). Blocks are cached by power-of-two size class and reused across
// collectives, so a steady training loop allocates none; a block goes back to the pool only
// once the stream that used it has passed its last copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace accel::dist {

class PinnedStagingPool {
 public:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;  // the size class, at least the requested bytes
  };
  struct Stats {
    size_t in_use_bytes = 0;
    size_t cached_bytes = 0;  // held by the pool, in use or not
    int64_t acquires = 0;
    int64_t reuses = 0;  // acquires served from the cache
    int64_t host_allocs = 0;
    int64_t host_frees = 0;
  };

  static PinnedStagingPool& instance();

  Block acquire(size_t bytes);  // a null block for 0 bytes
  void release(Block block);
  // Frees every cached block that is not in use.
  void emptyCache();
  Stats stats();

 private:
  PinnedStagingPool() = default;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> blocks
  Stats stats_;
};

}  // namespace accel::dist
