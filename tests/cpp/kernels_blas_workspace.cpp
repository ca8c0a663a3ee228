// cublasWorkspaceBytes (kernels/blas.h): the CUDA build's per-stream cuBLAS scratch, sized as
// PyTorch sizes it, so a user's CUBLAS_WORKSPACE_CONFIG means the same on accel.
#include <gtest/gtest.h>

#include "kernels/blas.h"

namespace accel::kernels {
namespace {

TEST(BlasWorkspace, DefaultsFollowTheArchitecture) {
  EXPECT_EQ(cublasWorkspaceBytes(nullptr, 9), int64_t{32} << 20);   // Hopper (H200)
  EXPECT_EQ(cublasWorkspaceBytes(nullptr, 10), int64_t{32} << 20);  // Blackwell
  EXPECT_EQ(cublasWorkspaceBytes(nullptr, 8), (4096 * 2 + 16 * 8) * int64_t{1024});
}

TEST(BlasWorkspace, ConfigPairsAddUp) {
  EXPECT_EQ(cublasWorkspaceBytes(":4096:8", 8), int64_t{32} << 20);  // deterministic mode
  EXPECT_EQ(cublasWorkspaceBytes(":16:8", 9), 16 * 8 * int64_t{1024});
  EXPECT_EQ(cublasWorkspaceBytes(":4096:2:16:8", 9), (4096 * 2 + 16 * 8) * int64_t{1024});
}

TEST(BlasWorkspace, MalformedConfigKeepsTheDefault) {
  for (const char* bad : {"", "4096", ":x:8", ":4096", ":4096:", ":-4:8"})
    EXPECT_EQ(cublasWorkspaceBytes(bad, 9), int64_t{32} << 20) << bad;
}

}  // namespace
}  // namespace accel::kernels
