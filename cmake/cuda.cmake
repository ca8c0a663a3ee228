# The CUDA driver plugin, libaccel_cuda.so: csrc/runtime/cuda (the rt::Driver over the CUDA
# runtime) plus csrc/kernels/cuda (the kernels' CUDA instantiation). It is built only when
# nvcc and the cuBLAS headers are found, and is loaded at run time with dlopen, so nothing
# else links against CUDA. cuBLAS comes from the toolkit or from the `nvidia-cublas` wheel
# that torch's CUDA builds already install.

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "accel: nvcc not found, the CUDA driver plugin is not built")
  return()
endif()

set(ACCEL_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of the accel plugin")
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES ${ACCEL_CUDA_ARCHITECTURES})
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

# The nvidia wheels' include/ and lib/ folders (nvidia/cu13/..., or nvidia/cublas/... in
# older wheels), as the Python that builds the extension sees them.
if(Python_EXECUTABLE)
  set(_accel_python "${Python_EXECUTABLE}")
elseif(PYTHON)
  set(_accel_python "${PYTHON}")
else()
  find_program(ACCEL_PYTHON NAMES python3 python)
  set(_accel_python "${ACCEL_PYTHON}")
endif()
set(_accel_wheel_dirs "")
if(_accel_python)
  execute_process(
    COMMAND "${_accel_python}" -c "import nvidia; print(';'.join(nvidia.__path__))"
    OUTPUT_VARIABLE _accel_nvidia_roots OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _accel_rc ERROR_QUIET)
  if(_accel_rc EQUAL 0)
    foreach(root ${_accel_nvidia_roots})
      file(GLOB _accel_found LIST_DIRECTORIES true "${root}/*")
      list(APPEND _accel_wheel_dirs ${_accel_found})
    endforeach()
  endif()
endif()

find_path(ACCEL_CUBLAS_INCLUDE_DIR cublas_v2.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_accel_wheel_dirs} PATH_SUFFIXES include)
# Wheels ship only the versioned sonames, with no dev symlink: name them in full.
find_library(ACCEL_CUBLAS_LIBRARY NAMES cublas libcublas.so.13 libcublas.so.12
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${_accel_wheel_dirs} PATH_SUFFIXES lib lib64)
find_library(ACCEL_CUBLASLT_LIBRARY NAMES cublasLt libcublasLt.so.13 libcublasLt.so.12
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${_accel_wheel_dirs} PATH_SUFFIXES lib lib64)
if(NOT ACCEL_CUBLAS_INCLUDE_DIR OR NOT ACCEL_CUBLAS_LIBRARY OR NOT ACCEL_CUBLASLT_LIBRARY)
  message(STATUS "accel: cuBLAS not found (pip install nvidia-cublas), "
                 "the CUDA driver plugin is not built")
  return()
endif()
message(STATUS "accel: CUDA driver plugin with cuBLAS from ${ACCEL_CUBLAS_INCLUDE_DIR}")

file(GLOB ACCEL_CUDA_SRC CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/csrc/runtime/cuda/*.cpp ${CMAKE_SOURCE_DIR}/csrc/kernels/cuda/*.cu)
add_library(accel_cuda SHARED ${ACCEL_CUDA_SRC})
set_target_properties(accel_cuda PROPERTIES
  CUDA_ARCHITECTURES "${ACCEL_CUDA_ARCHITECTURES}"
  CUDA_STANDARD ${ACCEL_CXX_STANDARD}
  CUDA_STANDARD_REQUIRED ON)
target_include_directories(accel_cuda PRIVATE ${ACCEL_CUBLAS_INCLUDE_DIR} ${TORCH_INCLUDE_DIRS})
# torch.accel.get_arch_list() reports what the plugin was compiled for.
string(REPLACE ";" " " _accel_arch_text "${ACCEL_CUDA_ARCHITECTURES}")
target_compile_definitions(accel_cuda PRIVATE ACCEL_CUDA_ARCH_LIST="${_accel_arch_text}")
target_link_libraries(accel_cuda PRIVATE CUDA::cudart ${ACCEL_CUBLAS_LIBRARY}
                      ${ACCEL_CUBLASLT_LIBRARY})
# The plugin is dlopen-ed RTLD_LOCAL: any symbol it expects from the extension would fail at
# load time on the GPU machine, so make that a link error here instead.
target_link_options(accel_cuda PRIVATE -Wl,--no-undefined)

# The NCCL plugin, libaccel_nccl.so: csrc/comm/nccl (comm::Communicator over NCCL), loaded by
# the comm layer with dlopen when a process group is created on the cuda driver. NCCL comes
# from the toolkit, ACCEL_NCCL_ROOT, or the `nvidia-nccl-cu13` wheel (the Makefile installs it
# when nvcc is present; torch's CUDA builds depend on it anyway).
set(ACCEL_NCCL_ROOT "$ENV{NCCL_ROOT}" CACHE PATH "Where NCCL's include/ and lib/ are")
find_path(ACCEL_NCCL_INCLUDE_DIR nccl.h
          HINTS ${ACCEL_NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${_accel_wheel_dirs}
          PATH_SUFFIXES include)
find_library(ACCEL_NCCL_LIBRARY NAMES nccl libnccl.so.2
             HINTS ${ACCEL_NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${_accel_wheel_dirs}
             PATH_SUFFIXES lib lib64)
if(NOT ACCEL_NCCL_INCLUDE_DIR OR NOT ACCEL_NCCL_LIBRARY)
  message(STATUS "accel: NCCL not found (pip install nvidia-nccl-cu13), "
                 "the NCCL plugin is not built")
  return()
endif()
message(STATUS "accel: NCCL plugin with NCCL from ${ACCEL_NCCL_INCLUDE_DIR}")
file(GLOB ACCEL_NCCL_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/csrc/comm/nccl/*.cpp)
add_library(accel_nccl SHARED ${ACCEL_NCCL_SRC})
target_include_directories(accel_nccl PRIVATE ${ACCEL_NCCL_INCLUDE_DIR})
target_link_libraries(accel_nccl PRIVATE CUDA::cudart ${ACCEL_NCCL_LIBRARY})
target_link_options(accel_nccl PRIVATE -Wl,--no-undefined)
