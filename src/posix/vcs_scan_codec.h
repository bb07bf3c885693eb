// vcs_scan_codec.h — a repository scan (posix/vcs_scan.h) as bytes, so that
// the scan can run in a child whose memory is bounded and hand its result
// to the launcher over a pipe (posix/bounded_scan.h,
// docs/deferred-execution.md, "The bound").
//
// The encoding is this build's own (native byte order and widths: both ends
// are the same binary); decode checks every length against what is left and
// refuses anything malformed whole.
#pragma once

#include <optional>
#include <string>

#include "posix/vcs_scan.h"

namespace cordon::vcs {

// Every member of `scan`, listings included.
std::string encode_scan(const vcs_scan& scan);

// Writes encode_scan's bytes to `fd` a megabyte at a time (the encoding is
// never held whole); false when a write failed.
bool write_scan(int fd, const vcs_scan& scan);

// The scan `bytes` encodes, or nothing when they are malformed or truncated.
std::optional<vcs_scan> decode_scan(const std::string& bytes);

}  // namespace cordon::vcs
