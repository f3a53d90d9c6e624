// Whether a buffer of elements still holds kbench's poison pattern (protocol/poison.h) in some
// element: the worker asks it of every checked call's outputs, to give unfinished outputs a second,
// longer look (worker.cpp, outputs_settled). moe_swiglu's largest output is 403M bf16 elements and
// is scanned on every checked, repeated and re-checked call, so the scan is written for speed: one
// loop per element width, whose fixed-size loads the compiler inlines and vectorises, where a
// memcpy of a run-time width per element was a library call per element.
#pragma once

#include <cstddef>

#include "protocol/poison.h"

namespace kb {

// Whether some whole element of `bytes` bytes (elements of p.bytes, from offset 0) equals
// p.pattern's low p.bytes bytes. A trailing partial element is not an element and never matches.
bool holds_poison_element(const std::byte* data, size_t bytes, const Poison& p);

}  // namespace kb
