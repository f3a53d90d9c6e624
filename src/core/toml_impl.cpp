// toml++'s implementation (its parser and printers), compiled once for all of kbench: every other
// file includes toml++ with TOML_HEADER_ONLY=0 (cmake/KbenchDeps.cmake) and gets declarations only.
// This is toml++'s documented non-header-only mode, with the library's own sources.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
