// record_stream: tells the caching allocator that a tensor is used on another stream.
#include <torch/library.h>

#include "core/device_allocator.h"

namespace accel {
namespace {

void record_stream(at::Tensor& self, c10::Stream stream) {
  recordStream(self.storage().data_ptr(), stream);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("record_stream", record_stream); }

}  // namespace
}  // namespace accel
