# A CMake project configured, built and tested with ctest inside the sandbox.
. "$(dirname "$0")/lib.sh"
need cmake make g++
cat >"$WS/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(wl CXX)
enable_testing()
add_library(square square.cpp)
add_executable(square_test square_test.cpp)
target_link_libraries(square_test square)
add_test(NAME square COMMAND square_test)
CM
printf 'int square(int x) { return x * x; }\n' >"$WS/square.cpp"
printf '#include <cstdio>\nint square(int);\nint main() { std::printf("%%d\\n", square(7)); return square(7) == 49 ? 0 : 1; }\n' >"$WS/square_test.cpp"
run_in -- sh -c 'cmake -S . -B build -G "Unix Makefiles" >/dev/null && cmake --build build -j2 >/dev/null && ctest --test-dir build --output-on-failure'
expect_eq "$RC" 0 "cmake + ctest: $OUT $ERR"
expect_contains "$OUT" "100% tests passed, 0 tests failed out of 1" "ctest's summary"
[ -x "$WS/build/square_test" ] || fail "the test binary is not in the workspace"
expect_eq "$("$WS/build/square_test")" "49" "the built program, run on the host"
