// The allocator's environment settings: TORCH_ACCEL_ALLOC_CONF (parsed here) and
// TORCH_ACCEL_NO_CACHING (cachingDisabled(), declared in caching_allocator.h).
#pragma once

#include "allocator/caching_allocator.h"

namespace accel::alloc {

// Parses "key:value[,key:value...]", CUDA's PYTORCH_CUDA_ALLOC_CONF syntax. Only
// max_split_size_mb is known; it must be an integer above 20 (MiB), as in CUDA. Null or empty
// gives the defaults. Throws std::invalid_argument naming the variable and the bad part.
Config parseAllocConf(const char* text);

}  // namespace accel::alloc
