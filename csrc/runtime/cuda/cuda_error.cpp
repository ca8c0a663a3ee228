#include "runtime/cuda/cuda_error.h"

namespace accel::rt::cuda {

Error CudaApi::translate(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return Error::Success;
    case cudaErrorMemoryAllocation: return Error::OutOfMemory;
    case cudaErrorInvalidDevice: return Error::InvalidDevice;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection: return Error::InvalidValue;
    case cudaErrorNotReady: return Error::NotReady;
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorLaunchOutOfResources:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError: return Error::LaunchFailure;
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction: return Error::NotSupported;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureWrongThread: return Error::CaptureUnsupported;
    case cudaErrorStreamCaptureInvalidated: return Error::CaptureInvalidated;
    case cudaErrorStreamCaptureUnjoined: return Error::CaptureUnjoined;
    default: return Error::Unknown;
  }
}

std::string& lastMessage() {
  thread_local std::string message;
  return message;
}

}  // namespace accel::rt::cuda
