// A block of device memory inside a segment (one driver malloc), and the ordered set of free
// blocks the allocator searches. Internal to the allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <new>
#include <set>
#include <vector>

#include "allocator/caching_allocator.h"
#include "runtime/driver.h"

namespace accel::alloc {

struct PrivatePool;

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested_size = 0;    // what the user asked for, while allocated
  rt::Stream stream = nullptr;  // the allocation stream; every block of a segment shares it
  bool is_small = false;        // which pool the segment belongs to
  PrivatePool* pool = nullptr;  // the segment's private pool, or null for the shared pools
  bool allocated = false;
  int event_count = 0;    // record_stream events still pending after free
  Block* prev = nullptr;  // neighbours in the same segment, in address order
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

// The nodes of the allocator's sets and maps: a free list per node size (there are a few), so
// the malloc/free hot path neither reaches the heap nor searches (the standard
// unsynchronized_pool_resource's deallocate searched its chunks: ~45 ns of a 1.7 us small op).
// Nodes are reused, and freed with the pool. Unsynchronized: the allocator's mutex guards
// every use.
class NodePool : public std::pmr::memory_resource {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;
  ~NodePool() override {
    for (void* p : nodes_) ::operator delete(p);
  }

 private:
  struct FreeNode {
    FreeNode* next;
  };
  struct FreeList {
    size_t bytes;
    FreeNode* head;
  };

  FreeList& listFor(size_t bytes) {
    for (FreeList& l : lists_)
      if (l.bytes == bytes) return l;
    return lists_.emplace_back(FreeList{bytes, nullptr});
  }
  void* do_allocate(size_t bytes, size_t align) override {
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return std::pmr::new_delete_resource()->allocate(bytes, align);
    FreeList& l = listFor(bytes);
    if (FreeNode* node = l.head) {
      l.head = node->next;
      return node;
    }
    void* p = ::operator new(bytes < sizeof(FreeNode) ? sizeof(FreeNode) : bytes);
    nodes_.push_back(p);
    return p;
  }
  void do_deallocate(void* p, size_t bytes, size_t align) override {
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return std::pmr::new_delete_resource()->deallocate(p, bytes, align);
    FreeList& l = listFor(bytes);
    l.head = new (p) FreeNode{l.head};
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::vector<FreeList> lists_;
  std::vector<void*> nodes_;  // every node made, freed with the pool
};

using FreeBlocks = std::set<Block*, BlockOrder, std::pmr::polymorphic_allocator<Block*>>;

}  // namespace accel::alloc

namespace accel::alloc {

// A private pool (CachingAllocator::createOrIncrefPool): free blocks of its own segments.
struct PrivatePool {
  PrivatePool(PoolId id, std::pmr::memory_resource* nodes)
      : id(id), small_blocks(nodes), large_blocks(nodes) {}
  const PoolId id;
  int use_count = 1;  // graphs, MemPools and routes that reference it
  int segments = 0;   // its segments still held from the driver
  FreeBlocks small_blocks;
  FreeBlocks large_blocks;
};

}  // namespace accel::alloc
