# Finds every dependency; a missing one stops the configure step and names the Debian
# package that provides it (scripts/install-deps.sh installs them all).

function(temper_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "Temper needs ${what}: install the Debian package '${package}' "
                        "(or run scripts/install-deps.sh)")
  endif()
endfunction()

# LLVM 19 lives beside Debian's default LLVM 14; look for it first.
# (LLVM's version file accepts only exact minor versions, so check the major by hand.)
find_package(LLVM CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(LLVM_FOUND AND NOT LLVM_VERSION_MAJOR EQUAL 19)
  set(LLVM_FOUND FALSE)
endif()
temper_require(LLVM_FOUND "LLVM 19" llvm-19-dev)
message(STATUS "Temper: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

find_package(OpenMP QUIET)
temper_require(OpenMP_CXX_FOUND "OpenMP" libgomp1)

find_package(Boost 1.74 QUIET COMPONENTS program_options)
temper_require(Boost_FOUND "Boost.Program_options" libboost-program-options-dev)

find_package(nlohmann_json 3 QUIET)
temper_require(nlohmann_json_FOUND "a JSON library (nlohmann/json)" nlohmann-json3-dev)

find_package(SQLite3 QUIET)
temper_require(SQLite3_FOUND "SQLite 3" libsqlite3-dev)

find_package(Eigen3 3.3 QUIET NO_MODULE)
temper_require(Eigen3_FOUND "Eigen 3" libeigen3-dev)

# The ONNX frontend: Debian's libonnx-dev needs protobuf found first (it does not pull it in).
find_package(Protobuf QUIET)
temper_require(Protobuf_FOUND "Protocol Buffers" libprotobuf-dev)
find_package(ONNX QUIET)
temper_require(ONNX_FOUND "ONNX's protobuf classes" libonnx-dev)

# The OpenCL target: the ICD loader (any vendor's platform; PoCL on a CPU-only machine).
# The CUDA target needs nothing at build time: NVRTC and the driver are loaded at run time.
find_package(OpenCL 3.0 QUIET)
temper_require(OpenCL_FOUND "the OpenCL ICD loader and headers" "ocl-icd-opencl-dev opencl-headers")

find_package(Threads REQUIRED)

if(TEMPER_BUILD_TESTS)
  find_package(GTest QUIET)
  temper_require(GTest_FOUND "GoogleTest" libgtest-dev)
endif()
