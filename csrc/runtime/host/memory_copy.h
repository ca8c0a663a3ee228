// The host driver's copies of device memory (memcpyAsync's work). A copy whose source and
// destination together overflow the last-level cache is written with non-temporal (streaming)
// stores, which skip reading each destination line before overwriting it, so it moves a third
// fewer bytes through memory: on a 2-core AMD EPYC VM, 16 -> 25 GB/s at 16 MiB and 11 -> 16
// GB/s at 256 MiB. A copy that fits stays glibc's memcpy, whose writes stay in the cache for
// the work that reads them next: on a 2-core Xeon VM with a 300 MiB L3, streaming the staging
// copies of a 16 / 64 MiB all_reduce (as a fixed 4 MiB threshold did) made them 1.4x slower
// and left gloo reading them from memory (all_reduce 15.0 -> 11.8 ms at 16 MiB, 57 -> 43 ms
// at 64 MiB).
#pragma once

#include <cstddef>

namespace accel::rt::host {

constexpr size_t kMinStreamingCopyBytes = 4 << 20;

// Copies of at least this many bytes stream: half the last-level cache, at least
// kMinStreamingCopyBytes (which is also the threshold where the cache size is unknown).
size_t streamingCopyBytes();

void copyMemory(void* dst, const void* src, size_t bytes);

// The streaming path itself, whatever the size (memcpy where the CPU has no AVX2).
void copyStreaming(void* dst, const void* src, size_t bytes);

}  // namespace accel::rt::host
