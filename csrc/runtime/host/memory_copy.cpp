#include "runtime/host/memory_copy.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace accel::rt::host {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
bool hasAvx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// dst 32-byte aligned, bytes a multiple of 128.
__attribute__((target("avx2"))) void streamAligned(char* dst, const char* src, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 96), d);
  }
  _mm_sfence();  // the stores are weakly ordered: done before whatever the stream runs next
}
#endif

}  // namespace

size_t streamingCopyBytes() {
  static const size_t bytes = [] {
    const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);  // 0 or -1 where unknown
    return std::max(kMinStreamingCopyBytes, llc > 0 ? static_cast<size_t>(llc) / 2 : size_t{0});
  }();
  return bytes;
}

void copyMemory(void* dst, const void* src, size_t bytes) {
  if (bytes >= streamingCopyBytes()) {
    copyStreaming(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

void copyStreaming(void* dst, const void* src, size_t bytes) {
#if !(defined(__x86_64__) && defined(__GNUC__))
  std::memcpy(dst, src, bytes);
#else
  if (!hasAvx2()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const size_t head = (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32;
  const size_t body = (bytes - head) / 128 * 128;
  std::memcpy(d, s, head);
  streamAligned(d + head, s + head, body);
  std::memcpy(d + head + body, s + head + body, bytes - head - body);
#endif
}

}  // namespace accel::rt::host
