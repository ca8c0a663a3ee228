// A block of device memory inside a segment (one driver malloc), and the ordered set of free
// blocks the allocator searches. Internal to the allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <set>
#include <vector>

#include "runtime/driver.h"

namespace accel::alloc {

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested_size = 0;   // what the user asked for, while allocated
  rt::Stream stream = nullptr;  // the allocation stream; every block of a segment shares it
  bool is_small = false;        // which pool the segment belongs to
  bool allocated = false;
  int event_count = 0;          // record_stream events still pending after free
  Block* prev = nullptr;        // neighbours in the same segment, in address order
  Block* next = nullptr;
  std::vector<rt::Stream> stream_uses;  // record_stream streams other than `stream`
  // While memory history is recorded: where the block, and (on a segment's first block) the
  // segment, were allocated.
  std::shared_ptr<void> context;
  std::shared_ptr<void> segment_context;

  bool isSplit() const { return prev != nullptr || next != nullptr; }
};

// Best fit on one stream: (stream, size, address) order, so lower_bound on
// (stream, size, 0) gives the smallest block of that stream that is large enough.
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) {
      return reinterpret_cast<uintptr_t>(a->stream) < reinterpret_cast<uintptr_t>(b->stream);
    }
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};

// Set nodes come from a pool resource so that the malloc/free hot path does not reach the
// heap. The resource is unsynchronized: the allocator's mutex guards every use.
using FreeBlocks = std::set<Block*, BlockOrder, std::pmr::polymorphic_allocator<Block*>>;

}  // namespace accel::alloc
