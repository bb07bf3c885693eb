// memory_trim.h — the supervisor gives back memory it only needed to start the run.
//
// While the command runs, the supervisor only waits in poll(2). Most of what
// it has mapped by then is the code and read-only data of compile and launch
// (the kernel maps file pages 64 kB at a time around each one touched), and
// free heap. Once a run has lasted a while, release_idle_memory() drops the
// process's mappings of the program's read-only pages (MADV_DONTNEED: they
// stay in the page cache; a page touched again is mapped again by a minor
// fault) and returns free heap to the kernel (malloc_trim). Short runs never
// pay for it.
#pragma once

namespace cordon::linux_impl {

// Safe to call at any time from a single-threaded process; does nothing
// where it cannot tell the program's segments (or they were relocated in place).
void release_idle_memory() noexcept;

}  // namespace cordon::linux_impl
