// src/windows/cross/compat/arpa/inet.h — the one POSIX header core's host
// rule parser includes (inet_pton/inet_ntop), mapped to Winsock for the
// mingw-w64 cross build. Windows declares the same functions in ws2tcpip.h.
#pragma once
#include <winsock2.h>
#include <ws2tcpip.h>
