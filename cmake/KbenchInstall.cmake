# `cmake --install` and the Debian package (cpack -G DEB), both in the FHS layout:
#   <prefix>/bin/kbench
#   <prefix>/lib/kbench/libkbench_python_bridge.so     Python solutions' bridge, when built
#   <prefix>/share/kbench/{problems,hardware,prices}   the deck, datasheets, price table
#   <prefix>/include/kbench/solution.h                 the solution ABI
#   <prefix>/share/doc/kbench/                         README.md and docs/
#   <prefix>/share/bash-completion/completions/kbench, <prefix>/share/zsh/vendor-completions/_kbench
# The installed kbench finds share/kbench relative to its own binary (src/core/data_dir.h), so the
# prefix can be moved or put on a cluster's shared filesystem. docs/install.md is the user's guide.
include(GNUInstallDirs)

install(TARGETS kbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The Python bridge (cmake/KbenchPython.cmake), found by kbench at <prefix>/lib/kbench/
# (target/python_solution.h).
if(TARGET kbench_python_bridge)
  install(TARGETS kbench_python_bridge LIBRARY DESTINATION lib/kbench)
endif()
install(DIRECTORY problems hardware prices DESTINATION ${CMAKE_INSTALL_DATADIR}/kbench
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY include/kbench DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Shell completion, written by the kbench just built from its own command-line definition
# (`kbench completion bash|zsh`), so that it never falls behind the commands.
set(KBENCH_COMPLETION_DIR ${CMAKE_BINARY_DIR}/completion)
add_custom_command(OUTPUT ${KBENCH_COMPLETION_DIR}/kbench ${KBENCH_COMPLETION_DIR}/_kbench
  COMMAND ${CMAKE_COMMAND} -E make_directory ${KBENCH_COMPLETION_DIR}
  COMMAND $<TARGET_FILE:kbench> completion bash > ${KBENCH_COMPLETION_DIR}/kbench
  COMMAND $<TARGET_FILE:kbench> completion zsh > ${KBENCH_COMPLETION_DIR}/_kbench
  DEPENDS kbench COMMENT "Writing kbench's shell completion" VERBATIM)
add_custom_target(kbench_completion ALL DEPENDS ${KBENCH_COMPLETION_DIR}/kbench ${KBENCH_COMPLETION_DIR}/_kbench)
install(FILES ${KBENCH_COMPLETION_DIR}/kbench DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${KBENCH_COMPLETION_DIR}/_kbench DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# The Debian package: kbench_<version>_<arch>.deb, installed under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "kbench developers <kbench@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "benchmark of coding agents writing GPU kernels")
set(CPACK_PACKAGE_DESCRIPTION "kbench drops a coding agent into a workspace with a kernel problem and judges the
kernel it leaves: correct on many seeds and shapes, honest (no reward hacks), and how close it comes
to the hardware's physical ceiling. Ships the problem deck, GPU datasheets and the solution ABI.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The binary without its debug information (200+ MB of it in a RelWithDebInfo build).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Shared-library dependencies from dpkg-shlibdeps (dpkg-dev, `scripts/setup --package`); the rest
# is what kbench runs rather than links: g++ builds host solutions (which include dlpack.h), and
# bubblewrap is the sandbox of every build, worker and agent.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++, libdlpack-dev, bubblewrap, tar")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "npm, slurm-client")
if(KBENCH_WITH_CUDA)
  # The CUDA toolkit (CUPTI, nvcc) comes from NVIDIA's packages or installer, not from Debian's
  # archive: its libraries are not looked up as Debian dependencies; docs/install.md says so.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
endif()
include(CPack)
