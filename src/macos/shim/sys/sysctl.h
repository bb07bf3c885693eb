// sys/sysctl.h — stand-in for Apple's sysctlbyname on other hosts (apple_shim.h).
#pragma once

#include <cstddef>

// Always -1 with errno ENOENT: no Apple sysctl exists on this host.
extern "C" int sysctlbyname(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen);
