// sys/event.h — stand-in for Apple's kqueue interface on other hosts (apple_shim.h).
#pragma once
// A system header, as Apple's is: the function kevent() hides the struct's
// implicit constructor, which -Wshadow would report in every includer.
#pragma GCC system_header

#include <time.h>

#include <cstdint>

// The filters, flags and notes the macOS launcher uses.
#define EVFILT_PROC (-5)
#define EVFILT_TIMER (-7)
#define EV_ADD 0x0001
#define EV_ONESHOT 0x0010
#define NOTE_EXIT 0x80000000U

struct kevent {
  std::uintptr_t ident;
  std::int16_t filter;
  std::uint16_t flags;
  std::uint32_t fflags;
  std::intptr_t data;
  void* udata;
};

#define EV_SET(kevp, a, b, c, d, e, f)                   \
  do {                                                   \
    struct kevent* cordon_kev_ = (kevp);                 \
    cordon_kev_->ident = static_cast<std::uintptr_t>(a); \
    cordon_kev_->filter = static_cast<std::int16_t>(b);  \
    cordon_kev_->flags = static_cast<std::uint16_t>(c);  \
    cordon_kev_->fflags = static_cast<std::uint32_t>(d); \
    cordon_kev_->data = static_cast<std::intptr_t>(e);   \
    cordon_kev_->udata = (f);                            \
  } while (0)

// A new queue (an epoll descriptor, close-on-exec). Returns it, or -1 with errno.
extern "C" int kqueue();

// Registers `changes` (EV_ADD of EVFILT_PROC with NOTE_EXIT: -1 with ESRCH when
// the process does not exist; EVFILT_TIMER: `data` milliseconds; any other
// filter or flag: -1 with EINVAL), then, when nevents > 0, waits for one event
// (timeout null: without limit) and returns how many were stored in `events`
// (0 or 1); -1 with errno (EINTR included) on failure. Every registration is
// one-shot: it is removed once delivered.
extern "C" int kevent(int kq, const struct kevent* changes, int nchanges, struct kevent* events, int nevents,
                      const struct timespec* timeout);
