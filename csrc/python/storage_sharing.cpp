// torch_accel._C's side of torch.multiprocessing for accel tensors (torch_accel/_sharing.py
// pickles and rebuilds them).
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Storage.h>
#include <torch/csrc/utils/pybind.h>

#include <cstring>

#include "core/ipc.h"

namespace py = pybind11;

namespace accel {

void registerStorageSharing(py::module& m) {
  // (device, segment fd or -1, segment handle bytes, segment id, segment size, offset, nbytes,
  //  lease fd): what a consumer needs to open the storage.
  m.def("_share_storage", [](py::handle storage) {
    const SharedStorage s = shareStorage(torch::createStorage(storage.ptr()));
    return py::make_tuple(s.device, s.segment.fd,
                          py::bytes(s.segment.bytes, sizeof(s.segment.bytes)), s.segment.id,
                          s.segment.size, s.offset, s.nbytes, s.lease_fd);
  });
  m.def("_open_shared_storage", [](int device, int fd, const std::string& bytes, uint64_t id,
                                   size_t size, size_t offset, size_t nbytes, int lease_fd) {
    rt::IpcMemHandle segment;
    segment.fd = fd;
    segment.id = id;
    segment.size = size;
    std::memcpy(segment.bytes, bytes.data(), std::min(bytes.size(), sizeof(segment.bytes)));
    c10::Storage storage = openSharedStorage(device, segment, offset, nbytes, lease_fd);
    return py::reinterpret_steal<py::object>(THPStorage_Wrap(std::move(storage)));
  });
  m.def("_acknowledge_shared_storage", &acknowledgeLease);
  m.def("_ipc_collect", [] {
    py::gil_scoped_release no_gil;
    collectShared();
  });
}

}  // namespace accel
