// The launch floor: the shortest time kbench's cold timer can give any call on a device, measured
// by timing the least work a call can do (Device::launch_empty: one empty kernel on the handed
// stream on cuda, nothing on the host) exactly as the worker times a solution's call: caches
// flushed, one call inside the target's timer (Device::time_call), its time taken from the activity
// span where the target attributes work (target/call_timing.h).
//
// Why it exists: tiny shapes are bound by the launch, not by DRAM or tensor cores. A softmax of
// 64 x 1024 floats moves 512 KiB, 0.1 us at an H100's DRAM bandwidth, while no kernel is timed
// under about 2 us; its speed-of-light fraction can never reach a few percent. The achievable time
// of a shape is the largest of its compute time, its memory time and this floor
// (eval/roofline.h, achievable_fraction), so a kernel that runs at the floor scores 1.0 there.
#pragma once

#include <cstddef>
#include <vector>

#include "target/ceilings.h"
#include "target/target.h"

namespace kb {

// The median of `samples` timed empty calls (after a few untimed ones), and a source naming how it
// was measured with the spread (p10, p90) and which timer gave the samples. Starts the device's work
// attribution when it has one (a process that measures a floor runs no solution). Throws
// std::runtime_error when the device fails a call, std::invalid_argument when samples < 1.
Ceiling measure_launch_floor(Device& device, size_t samples = 201);

// The floor of a list of sample times: their median (the worker scores a shape by its median).
// Throws std::invalid_argument on an empty list or a non-positive or non-finite sample.
double launch_floor_of(const std::vector<double>& samples);

}  // namespace kb
