#include "kernels/amp.h"

#include "kernels/host/host_executor.h"
#include "kernels/host/host_kernels.h"

namespace accel::kernels::host {

rt::Error amp_unscale(const ElementwiseDesc& d, float* found_inf, const float* inv_scale, rt::Stream stream) {
  return launchAmpUnscale<HostExecutor>(d, found_inf, inv_scale, stream);
}

rt::Error amp_update_scale(const ElementwiseDesc& d, int32_t* growth_tracker, const float* found_inf, double growth_factor, double backoff_factor, int64_t growth_interval, rt::Stream stream) {
  return launchAmpUpdateScale<HostExecutor>(d, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval, stream);
}

}  // namespace accel::kernels::host
