# Python solutions (docs/python-solutions.md): kbench's Python bridge, a shared library that
# implements the solution ABI (include/kbench/solution.h) by embedding CPython and calling a
# solution.py. Built only when CMake finds Python's embedding files (python3-dev); without them the
# Python language is unavailable and `kbench targets` says why. The interpreter found here is the
# default one at run time (KBENCH_PYTHON overrides it): the bridge embeds this Python version.
#
# Which Python: -DPython3_EXECUTABLE=... when given. Otherwise the first of python3 on PATH and the
# system's /usr/bin/python3 that can import torch, since a Python solution needs torch (scripts/setup
# installs Debian's python3-torch into the system Python): on a machine whose PATH starts with a
# pyenv or conda python3 without torch, CMake's own first find would build a bridge no solution can
# use. When neither imports torch, CMake's own find decides, and `kbench targets` names what is missing.
if(NOT Python3_EXECUTABLE)
  find_program(KBENCH_PATH_PYTHON3 NAMES python3 NO_CACHE)
  foreach(candidate IN ITEMS "${KBENCH_PATH_PYTHON3}" /usr/bin/python3)
    if(candidate AND EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import torch" RESULT_VARIABLE torch_missing
                      OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
      if(torch_missing EQUAL 0)
        set(Python3_EXECUTABLE "${candidate}" CACHE FILEPATH "The Python kbench's bridge embeds (one that imports torch)")
        break()
      endif()
    endif()
  endforeach()
endif()
find_package(Python3 COMPONENTS Interpreter Development.Embed)
if(Python3_Interpreter_FOUND)
  target_compile_definitions(kbench_target PRIVATE KBENCH_PYTHON_EXECUTABLE="${Python3_EXECUTABLE}")
endif()
if(Python3_Interpreter_FOUND AND Python3_Development.Embed_FOUND)
  add_library(kbench_python_bridge SHARED src/python/bridge.cpp)
  target_include_directories(kbench_python_bridge PRIVATE ${CMAKE_SOURCE_DIR}/include ${KBENCH_DLPACK_INCLUDE})
  target_link_libraries(kbench_python_bridge PRIVATE Python3::Python)
  # Only kb_setup, kb_run and kb_teardown exported (the evaluator's symbol check reads them), and
  # full RELRO like a built solution (target/host/host_target.cpp).
  set_target_properties(kbench_python_bridge PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # The visibility preset hides only the bridge's own code: on the H100 machine (Ubuntu's Python 3.12,
  # GCC 13) the linked bridge also exported 25 of the C++ runtime's __cxa_* names, which the symbol
  # check refuses. A version script keeps the three ABI names whatever the toolchain links in.
  target_link_options(kbench_python_bridge PRIVATE "LINKER:--version-script=${CMAKE_SOURCE_DIR}/src/python/bridge.map"
                      "LINKER:--exclude-libs,ALL")
  set_property(TARGET kbench_python_bridge APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/src/python/bridge.map)
  target_compile_definitions(kbench_target PRIVATE
    KBENCH_PYTHON_BRIDGE="$<TARGET_FILE:kbench_python_bridge>"
    KBENCH_PYTHON_BRIDGE_VERSION="${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
  add_dependencies(kbench_target kbench_python_bridge)
  message(STATUS "kbench: Python solutions ON (Python ${Python3_VERSION}, ${Python3_EXECUTABLE})")
else()
  message(STATUS "kbench: Python solutions OFF (no Python3 interpreter with Development.Embed)")
endif()
