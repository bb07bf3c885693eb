# Cross toolchain for Windows x86-64 with Debian's mingw-w64 (the posix
# threads variant, which std::thread and GoogleTest need). Used by
# scripts/test-windows.sh for src/windows/cross/.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Test executables run under wine (64-bit loader; Debian installs it outside PATH).
find_program(CORDON_WINE64 NAMES wine64 PATHS /usr/lib/wine NO_DEFAULT_PATH)
if(NOT CORDON_WINE64)
  find_program(CORDON_WINE64 NAMES wine64 wine)
endif()
if(CORDON_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CORDON_WINE64})
endif()
