#include "kernels/random.h"

#include "runtime/host/host_launch.h"
#include "runtime/host/parallel.h"

namespace accel::kernels {
namespace host {

rt::Error randomFill(const RandomDesc& d, rt::Stream stream) {
  if (d.elems.numel == 0) return rt::Error::Success;
  return rt::host::enqueue(stream, [d] {
    rt::host::parallelFor(0, randomGroups(d), 4096, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) randomGroup(d, g);
    });
  });
}

}  // namespace host

const RandomTable& hostRandomTable() {
  static const RandomTable table{&host::randomFill};
  return table;
}

}  // namespace accel::kernels
