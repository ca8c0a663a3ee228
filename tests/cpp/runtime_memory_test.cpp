#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/host/memory_copy.h"
#include "runtime_test_util.h"

namespace accel::rt {
namespace {

TEST(RuntimeMemory, PropertiesReportCapacity) {
  auto drv = test::hostDriver(3, 32 << 20);
  EXPECT_STREQ(drv->name(), "host");
  EXPECT_EQ(drv->deviceCount(), 3);
  DeviceProperties p;
  ASSERT_EQ(drv->getDeviceProperties(2, &p), Error::Success);
  EXPECT_EQ(p.total_memory, size_t{32} << 20);
  EXPECT_EQ(p.major, 1);
  EXPECT_GE(p.multi_processor_count, 1);
  EXPECT_NE(p.name.find('2'), std::string::npos);
  EXPECT_EQ(drv->getDeviceProperties(3, &p), Error::InvalidDevice);
}

TEST(RuntimeMemory, MallocFreeAndCapacityAccounting) {
  auto drv = test::hostDriver(2, 4 << 20);
  void* p = nullptr;
  ASSERT_EQ(drv->malloc(1, &p, 1000), Error::Success);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 512, 0u);
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(drv->memGetInfo(1, &free_bytes, &total), Error::Success);
  EXPECT_EQ(total, size_t{4} << 20);
  EXPECT_EQ(free_bytes, total - 1024);  // charged rounded up to 512 bytes
  ASSERT_EQ(drv->memGetInfo(0, &free_bytes, &total), Error::Success);
  EXPECT_EQ(free_bytes, total);  // other device untouched
  EXPECT_EQ(drv->pointerDevice(p), 1);
  EXPECT_EQ(drv->pointerDevice(static_cast<char*>(p) + 999), 1);
  EXPECT_EQ(drv->pointerDevice(static_cast<char*>(p) + 1000), -1);
  int on_stack = 0;
  EXPECT_EQ(drv->pointerDevice(&on_stack), -1);
  ASSERT_EQ(drv->free(1, p), Error::Success);
  ASSERT_EQ(drv->memGetInfo(1, &free_bytes, &total), Error::Success);
  EXPECT_EQ(free_bytes, total);
  EXPECT_EQ(drv->pointerDevice(p), -1);
}

TEST(RuntimeMemory, OutOfMemoryIsAnErrorNotACrash) {
  auto drv = test::hostDriver(1, 4 << 20);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(drv->malloc(0, &a, 3 << 20), Error::Success);
  EXPECT_EQ(drv->malloc(0, &b, 2 << 20), Error::OutOfMemory);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(drv->malloc(0, &b, size_t{1} << 62), Error::OutOfMemory);
  ASSERT_EQ(drv->malloc(0, &b, 1 << 20), Error::Success);  // what is left still serves
  EXPECT_EQ(drv->free(0, a), Error::Success);
  EXPECT_EQ(drv->free(0, b), Error::Success);
}

TEST(RuntimeMemory, BadFreeIsInvalidValue) {
  auto drv = test::hostDriver();
  void* p = nullptr;
  ASSERT_EQ(drv->malloc(0, &p, 4096), Error::Success);
  int local = 0;
  EXPECT_EQ(drv->free(0, &local), Error::InvalidValue);
  EXPECT_EQ(drv->free(0, static_cast<char*>(p) + 512), Error::InvalidValue);  // interior
  EXPECT_EQ(drv->free(1, p), Error::InvalidValue);                            // wrong device
  EXPECT_EQ(drv->free(5, p), Error::InvalidDevice);
  EXPECT_EQ(drv->free(0, nullptr), Error::Success);
  EXPECT_EQ(drv->free(0, p), Error::Success);
  EXPECT_EQ(drv->free(0, p), Error::InvalidValue);  // double free
  EXPECT_EQ(drv->malloc(2, &p, 16), Error::InvalidDevice);
}

TEST(RuntimeMemory, HostMemoryIsTracked) {
  auto drv = test::hostDriver();
  void* h = nullptr;
  ASSERT_EQ(drv->mallocHost(&h, 1 << 16), Error::Success);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h) % 512, 0u);
  std::memset(h, 7, 1 << 16);
  EXPECT_EQ(drv->pointerDevice(h), -1);
  int local = 0;
  EXPECT_EQ(drv->freeHost(&local), Error::InvalidValue);
  EXPECT_EQ(drv->freeHost(h), Error::Success);
  EXPECT_EQ(drv->freeHost(h), Error::InvalidValue);
}

TEST(RuntimeMemory, MemcpyEveryKind) {
  auto drv = test::hostDriver();
  constexpr size_t n = 1 << 20;
  std::vector<uint8_t> src(n), back(n, 0), h2h(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
  void *d0 = nullptr, *d1 = nullptr, *d0b = nullptr;
  ASSERT_EQ(drv->malloc(0, &d0, n), Error::Success);
  ASSERT_EQ(drv->malloc(0, &d0b, n), Error::Success);
  ASSERT_EQ(drv->malloc(1, &d1, n), Error::Success);
  Stream s = drv->defaultStream(0);
  ASSERT_EQ(drv->memcpyAsync(h2h.data(), src.data(), n, MemcpyKind::HostToHost, s), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(d0, src.data(), n, MemcpyKind::HostToDevice, s), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(d0b, d0, n, MemcpyKind::DeviceToDevice, s), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(d1, d0b, n, MemcpyKind::DeviceToDevice, s), Error::Success);  // peer
  ASSERT_EQ(drv->memcpyAsync(back.data(), d1, n, MemcpyKind::DeviceToHost, s), Error::Success);
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(h2h, src);
  EXPECT_EQ(back, src);

  ASSERT_EQ(drv->memsetAsync(static_cast<char*>(d1) + 10, 0xAB, 100, s), Error::Success);
  ASSERT_EQ(drv->memcpyAsync(back.data(), d1, n, MemcpyKind::DeviceToHost, s), Error::Success);
  ASSERT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(back[9], src[9]);
  EXPECT_EQ(back[10], 0xAB);
  EXPECT_EQ(back[109], 0xAB);
  EXPECT_EQ(back[110], src[110]);
  for (void* p : {d0, d0b}) EXPECT_EQ(drv->free(0, p), Error::Success);
  EXPECT_EQ(drv->free(1, d1), Error::Success);
}

// The streaming path (large copies) lands every byte, whatever the alignment of either side
// and the length of the unaligned head and tail.
TEST(RuntimeMemory, StreamingCopiesAreExactAtAnyAlignment) {
  const size_t big = host::kMinStreamingCopyBytes;
  std::vector<uint8_t> src(big + 4096), dst(big + 4096);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + i / 251);
  for (size_t bytes : {size_t{100}, big - 1, big, big + 1, big + 127, big + 3000}) {
    for (size_t src_off : {0, 1, 31, 64}) {
      for (size_t dst_off : {0, 5, 32, 95}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        host::copyStreaming(dst.data() + dst_off, src.data() + src_off, bytes);
        ASSERT_EQ(std::memcmp(dst.data() + dst_off, src.data() + src_off, bytes), 0)
            << bytes << " bytes, offsets " << src_off << " and " << dst_off;
        ASSERT_EQ(dst[dst_off + bytes], 0xEE) << "wrote past the end";
        if (dst_off > 0) ASSERT_EQ(dst[dst_off - 1], 0xEE) << "wrote before the start";
      }
    }
  }
}

TEST(RuntimeMemory, MemcpyValidatesRangesAndKinds) {
  auto drv = test::hostDriver();
  Stream s = drv->defaultStream(0);
  void* d = nullptr;
  ASSERT_EQ(drv->malloc(0, &d, 4096), Error::Success);
  std::vector<char> h(8192);
  char* dc = static_cast<char*>(d);
  EXPECT_EQ(drv->memcpyAsync(d, h.data(), 4097, MemcpyKind::HostToDevice, s), Error::InvalidValue);
  EXPECT_EQ(drv->memcpyAsync(dc + 4000, h.data(), 97, MemcpyKind::HostToDevice, s),
            Error::InvalidValue);
  EXPECT_EQ(drv->memcpyAsync(dc + 4000, h.data(), 96, MemcpyKind::HostToDevice, s), Error::Success);
  EXPECT_EQ(drv->memcpyAsync(h.data(), h.data() + 4096, 16, MemcpyKind::DeviceToHost, s),
            Error::InvalidValue);  // source is not device memory
  EXPECT_EQ(drv->memcpyAsync(h.data(), d, 16, MemcpyKind::HostToHost, s), Error::InvalidValue);
  EXPECT_EQ(drv->memcpyAsync(nullptr, d, 16, MemcpyKind::DeviceToHost, s), Error::InvalidValue);
  EXPECT_EQ(drv->memcpyAsync(nullptr, nullptr, 0, MemcpyKind::DeviceToHost, s), Error::Success);
  EXPECT_EQ(drv->memsetAsync(h.data(), 0, 16, s), Error::InvalidValue);
  EXPECT_EQ(drv->memsetAsync(d, 0, 4097, s), Error::InvalidValue);
  EXPECT_EQ(drv->streamSynchronize(s), Error::Success);
  EXPECT_EQ(drv->free(0, d), Error::Success);
}

}  // namespace
}  // namespace accel::rt
