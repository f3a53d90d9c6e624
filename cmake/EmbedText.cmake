# Writes OUTPUT, a C++ file defining `const char NAME[]` in namespace kb with the text of INPUT as a
# raw string literal: kbench's own scripts travel inside the binary (src/eval/python_scan.h says why).
#   cmake -DINPUT=file -DOUTPUT=file.cpp -DNAME=identifier -P EmbedText.cmake
cmake_minimum_required(VERSION 3.25)
file(READ "${INPUT}" text)
# The literal's end marker must not occur in the text (it would end the string early).
string(FIND "${text}" ")kbench_embedded\"" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string end marker )kbench_embedded\" and cannot be embedded")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake: edit the source, not this file.\n"
  "namespace kb {\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"kbench_embedded(${text})kbench_embedded\";\n"
  "}  // namespace kb\n")
# Copied only when it changed, so that an unchanged script recompiles nothing.
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.tmp")
