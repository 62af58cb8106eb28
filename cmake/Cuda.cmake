# MATMULVIZ_CUDA=AUTO|ON|OFF. AUTO enables CUDA when a toolkit (nvcc) is found; ON requires it.
# Sets MATMULVIZ_HAVE_CUDA. With the toolkit present the CUDA code is always compiled; whether a
# device answers is decided at run time (see kernels/cuda).
set(MATMULVIZ_HAVE_CUDA OFF)
if(NOT MATMULVIZ_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # sm_80 (A100) and sm_90 (H100) machine code, plus compute_90 PTX for newer GPUs.
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake < 3.25.2 (Debian 12 has 3.25.1) does not know nvcc's flag for C++20; nvcc >= 12 has
    # it. Teach it, as CMake 3.25.2's Modules/Compiler/NVIDIA-CUDA.cmake does.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(MATMULVIZ_HAVE_CUDA ON)
  elseif(MATMULVIZ_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MATMULVIZ_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "matmulviz: CUDA backend ${MATMULVIZ_HAVE_CUDA} (MATMULVIZ_CUDA=${MATMULVIZ_CUDA})")
