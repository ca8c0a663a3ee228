// The CUDA driver's error rule (runtime/cuda/error_rule.h) against a fake CUDA runtime that
// keeps a per-thread last-error slot as CUDA does: every failing call, cudaErrorNotReady
// included, leaves its code there; cudaGetLastError returns it and resets it, except for a
// sticky error, which stays.
#include <gtest/gtest.h>

#include <string>

#include "runtime/cuda/error_rule.h"

namespace accel::rt::cuda {
namespace {

enum class FakeCode { Success, NotReady, InvalidValue, OutOfResources, IllegalAddress };

struct FakeCuda {
  using Code = FakeCode;
  static constexpr Code kSuccess = FakeCode::Success;
  static constexpr Code kNotReady = FakeCode::NotReady;
  static inline Code slot = FakeCode::Success;
  static inline bool sticky = false;
  static inline int takes = 0;

  static Error translate(Code c) {
    switch (c) {
      case FakeCode::InvalidValue: return Error::InvalidValue;
      case FakeCode::OutOfResources:
      case FakeCode::IllegalAddress: return Error::LaunchFailure;
      default: return Error::Unknown;
    }
  }
  static const char* describe(Code c) {
    return c == FakeCode::InvalidValue     ? "invalid argument"
           : c == FakeCode::OutOfResources ? "too many resources requested for launch"
                                           : "an illegal memory access was encountered";
  }
  static Code takeLastError() {
    ++takes;
    const Code c = slot;
    if (!sticky) slot = FakeCode::Success;
    return c;
  }
  // A runtime call returning `c`, as CUDA records it. A sticky error fails every call.
  static Code call(Code c) {
    if (sticky) return slot;
    if (c != FakeCode::Success) slot = c;
    return c;
  }
  // A <<<...>>> launch: nothing returned, a failure only in the slot.
  static void launch(Code c) { (void)call(c); }
};

class CudaErrorRule : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeCuda::slot = FakeCode::Success;
    FakeCuda::sticky = false;
    FakeCuda::takes = 0;
  }
  std::string message;
};

TEST_F(CudaErrorRule, QueryNotReadyIsClearedAndDoesNotFailTheNextLaunch) {
  EXPECT_EQ(settle<FakeCuda>(FakeCuda::call(FakeCode::NotReady), "cudaEventQuery", message),
            Error::NotReady);
  EXPECT_EQ(FakeCuda::slot, FakeCode::Success);
  EXPECT_EQ(message, "");
  FakeCuda::launch(FakeCode::Success);
  EXPECT_EQ(settleLaunch<FakeCuda>("reduceKernel", message), Error::Success);
}

TEST_F(CudaErrorRule, NonStickyErrorIsReportedOnceByTheCallThatFailed) {
  EXPECT_EQ(settle<FakeCuda>(FakeCuda::call(FakeCode::InvalidValue), "cudaMemcpyAsync", message),
            Error::InvalidValue);
  EXPECT_EQ(message, "cudaMemcpyAsync: invalid argument");
  FakeCuda::launch(FakeCode::Success);
  EXPECT_EQ(settleLaunch<FakeCuda>("denseKernel", message), Error::Success);
  EXPECT_EQ(message, "");  // the success empties it: no later failure shows the old text
}

TEST_F(CudaErrorRule, LaunchFailureKeepsItsOwnMessage) {
  (void)settle<FakeCuda>(FakeCuda::call(FakeCode::InvalidValue), "cudaStreamWaitEvent", message);
  FakeCuda::launch(FakeCode::OutOfResources);
  EXPECT_EQ(settleLaunch<FakeCuda>("blockPerOutput", message), Error::LaunchFailure);
  EXPECT_EQ(message, "blockPerOutput: too many resources requested for launch");
  EXPECT_EQ(FakeCuda::slot, FakeCode::Success);
}

TEST_F(CudaErrorRule, StickyErrorKeepsFailing) {
  FakeCuda::launch(FakeCode::IllegalAddress);
  FakeCuda::sticky = true;
  EXPECT_EQ(settle<FakeCuda>(FakeCuda::call(FakeCode::Success), "cudaStreamSynchronize", message),
            Error::LaunchFailure);
  EXPECT_EQ(message, "cudaStreamSynchronize: an illegal memory access was encountered");
  EXPECT_EQ(settle<FakeCuda>(FakeCuda::call(FakeCode::Success), "cudaMalloc", message),
            Error::LaunchFailure);
}

TEST_F(CudaErrorRule, ProbeClearsTheSlotAndKeepsTheMessage) {
  (void)settle<FakeCuda>(FakeCuda::call(FakeCode::InvalidValue), "cudaGraphInstantiate", message);
  EXPECT_FALSE(settleProbe<FakeCuda>(FakeCuda::call(FakeCode::InvalidValue)));  // cleanup
  EXPECT_EQ(FakeCuda::slot, FakeCode::Success);
  EXPECT_EQ(message, "cudaGraphInstantiate: invalid argument");
  EXPECT_TRUE(settleProbe<FakeCuda>(FakeCuda::call(FakeCode::Success)));
  EXPECT_EQ(message, "cudaGraphInstantiate: invalid argument");
}

TEST_F(CudaErrorRule, SuccessTouchesNoSlot) {
  EXPECT_EQ(settle<FakeCuda>(FakeCuda::call(FakeCode::Success), "cudaSetDevice", message),
            Error::Success);
  EXPECT_EQ(FakeCuda::takes, 0);  // no cudaGetLastError on the fast path
}

}  // namespace
}  // namespace accel::rt::cuda
