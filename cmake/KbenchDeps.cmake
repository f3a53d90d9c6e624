# Third-party dependencies, all from Debian packages (scripts/setup installs them). Nothing vendored.
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(OpenMP REQUIRED)
find_package(Threads REQUIRED)
# The worker's system-call filter (libseccomp-dev) and the HMAC of its replies (libssl-dev's libcrypto).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# The model gateway: cpp-httplib serves (Debian builds it as a library, with the OpenSSL/zlib/brotli
# options its pkg-config file carries, which every includer must share), libcurl forwards.
pkg_check_modules(KBENCH_HTTPLIB REQUIRED cpp-httplib)
find_package(CURL REQUIRED)
# The results database (src/store/results_db.h): Debian's libsqlite3-dev.
find_package(SQLite3 REQUIRED)

# toml++ and DLPack are used from their headers, so kbench carries no shared-library dependency for
# them (Debian's toml++ config forces its shared library). toml++'s implementation (its parser) is
# compiled once, in src/core/toml_impl.cpp, not in every file that reads TOML (its header-only mode,
# the library's default, costs each of them ~6 s of compile time).
find_path(KBENCH_TOMLPP_INCLUDE toml++/toml.h REQUIRED)
find_path(KBENCH_DLPACK_INCLUDE dlpack/dlpack.h REQUIRED)

add_library(kbench_deps INTERFACE)
add_library(kbench::deps ALIAS kbench_deps)
target_include_directories(kbench_deps SYSTEM INTERFACE ${KBENCH_TOMLPP_INCLUDE} ${KBENCH_DLPACK_INCLUDE})
target_compile_definitions(kbench_deps INTERFACE TOML_HEADER_ONLY=0 TOML_EXCEPTIONS=1)
# fmt as Debian's compiled library (libfmt): its header-only mode compiles fmt's formatting engine
# into every file that formats, about a third of the compile time of a typical kbench file.
target_link_libraries(kbench_deps INTERFACE CLI11::CLI11 nlohmann_json::nlohmann_json fmt::fmt Threads::Threads
  PkgConfig::SECCOMP OpenSSL::Crypto SQLite::SQLite3)

# The cuda target: the CUDA toolkit is optional at build time (the host target needs none).
set(KBENCH_WITH_CUDA OFF)
if(NOT KBENCH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
    set(KBENCH_WITH_CUDA ON)
  elseif(KBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KBENCH_CUDA=ON but no CUDA toolkit (nvcc) was found; install it or pass -DKBENCH_CUDA=OFF")
  endif()
endif()
message(STATUS "kbench: cuda target ${KBENCH_WITH_CUDA}")
