// framing.h — cutting a sidecar's output into protocol frames
// (docs/sidecars.md, "Framing").
//
// A confined sidecar speaks to its host on stdout. cordon forwards only whole,
// well-formed frames, byte for byte, and keeps the rest out of the host's
// parser: a library that prints a banner or a stray debug line on stdout must
// not be able to inject or corrupt protocol messages. What is not a frame is
// discarded and counted; the report keeps a short sample of it.
//
//   mcp  one JSON-RPC 2.0 message per line, terminated by "\n" (the MCP stdio
//        transport): a JSON object with "jsonrpc": "2.0", or a non-empty array
//        of such objects (a batch). A line that is not one is discarded.
//   lsp  "Content-Length: N\r\n" (and optionally "Content-Type: ...\r\n"),
//        "\r\n", then N bytes of a JSON-RPC 2.0 message (the LSP base
//        protocol). Bytes before a header, a malformed header block and a
//        body that is not JSON-RPC are discarded; the splitter resynchronises
//        at the next "Content-Length:".
//   raw  no framing: every byte is a frame.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sidecars {

enum class protocol { mcp, lsp, raw };
std::string_view to_string(protocol p) noexcept;
std::optional<protocol> protocol_from_string(std::string_view name) noexcept;

// One well-formed frame: its bytes exactly as received (header included), and
// the parsed message (null for raw).
struct frame {
  std::string bytes;
  nlohmann::json message;
};

// Bytes that were not a frame.
struct discarded {
  std::size_t bytes = 0;
  std::string reason;  // "not JSON", "not JSON-RPC 2.0", "no Content-Length header", ...
  std::string sample;  // the first bytes (at most sample_bytes), as received
};

class frame_splitter {
 public:
  static constexpr std::size_t default_max_frame_bytes = 16u << 20;  // 16 MiB
  static constexpr std::size_t sample_bytes = 120;

  explicit frame_splitter(protocol p, std::size_t max_frame_bytes = default_max_frame_bytes);

  // Takes the next bytes of the stream; appends each complete frame to
  // `frames` and each discarded stretch to `junk`, in stream order. An mcp
  // line that is not a frame is one stretch; bytes outside frames (and an
  // over-long line, dropped as it arrives) are one stretch up to the next
  // frame, reported when that frame (or the end) comes, whatever the reads.
  void feed(std::string_view bytes, std::vector<frame>& frames, std::vector<discarded>& junk);
  // The stream ended: a partial frame left over is discarded.
  void finish(std::vector<discarded>& junk);
  // Bytes held for a frame not yet complete.
  std::size_t buffered() const noexcept { return buffer_.size() - start_; }

 private:
  bool next_mcp(std::vector<frame>& frames, std::vector<discarded>& junk);
  bool next_lsp(std::vector<frame>& frames, std::vector<discarded>& junk);
  void drop(std::size_t count, std::string reason, std::vector<discarded>& junk, bool mergeable = false);
  void flush(std::vector<discarded>& junk);
  void emit(std::size_t length, nlohmann::json message, std::vector<frame>& frames, std::vector<discarded>& junk);
  void compact();

  protocol protocol_;
  std::size_t max_frame_;
  std::string buffer_;
  std::size_t start_ = 0;           // first byte not yet consumed
  std::size_t scanned_ = 0;         // mcp: bytes after start_ already known to hold no '\n'
  bool discarding_line_ = false;    // mcp: inside an over-long line, dropping to its end
  std::optional<discarded> open_;   // a stretch still growing (bytes outside frames), not yet reported
};

// True when `message` is a JSON-RPC 2.0 message or a non-empty batch of them.
bool is_json_rpc(const nlohmann::json& message);

}  // namespace cordon::sidecars
