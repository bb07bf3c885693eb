// sanitizer.h — whether this test binary is built with a sanitizer.
// GCC says __SANITIZE_ADDRESS__; clang 14 answers only __has_feature. Tests
// use it where a sanitizer's own memory (shadow, quarantine) changes what an
// address-space limit or a resident-size bound can show.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CORDON_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CORDON_TEST_UNDER_SANITIZER 1
#endif
#endif
#ifndef CORDON_TEST_UNDER_SANITIZER
#define CORDON_TEST_UNDER_SANITIZER 0
#endif
