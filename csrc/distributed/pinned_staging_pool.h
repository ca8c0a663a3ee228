// Page-locked host buffers that stage accel memory for a transport working on host memory
// (gloo on the host driver). Blocks are cached by power-of-two size class and reused across
// collectives, so a steady training loop allocates none. As the caching allocator does with
// device blocks, a block is reused in stream order: once a batch has queued its last use of a
// block on a stream, later batches on that stream may take it at once (the stream runs them
// after that use), so a burst of queued collectives stages through one block per size, which
// stays in the caches; other streams get it only once the stream has passed the use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace accel::dist {

class PinnedStagingPool {
 public:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;  // the size class, at least the requested bytes
  };
  struct Stats {
    size_t in_use_bytes = 0;  // blocks with a use the stream has not passed yet
    size_t cached_bytes = 0;  // held by the pool, in use or not
    int64_t acquires = 0;
    int64_t reuses = 0;  // acquires served from the cache
    int64_t host_allocs = 0;
    int64_t host_frees = 0;
  };

  static PinnedStagingPool& instance();

  // A block for work queued on `stream` (a null block for 0 bytes): one retired on that
  // stream if there is one, else a free one, else a new one.
  Block acquire(size_t bytes, const void* stream);
  // The caller has queued its last use of the block on `stream`.
  void retire(Block block, const void* stream);
  // The stream has passed one use of the block (one acquire); once it has passed them all,
  // any stream may take it.
  void release(Block block);
  // Frees every cached block that is not in use.
  void emptyCache();
  Stats stats();

 private:
  struct Owner {
    const void* stream = nullptr;  // where it was last retired
    int uses = 0;                  // acquires whose use the stream has not passed yet
  };

  PinnedStagingPool() = default;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;                             // size class
  std::map<std::pair<const void*, size_t>, std::vector<void*>> retired_;  // stream, size
  std::unordered_map<void*, Owner> owners_;                               // blocks in use
  Stats stats_;
};

}  // namespace accel::dist
