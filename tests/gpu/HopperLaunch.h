// The launchers of tests/gpu/hopper_launch.cu: kernel `name` with its device pointers and its
// integer arguments in the order of its parameters; the cudaError_t it returned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

int hopperLaunch(const std::string& name, const std::vector<void*>& pointers, const std::vector<int32_t>& ints);
