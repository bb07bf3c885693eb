// The frame splitter of `cordon sidecar` (src/sidecars/framing.h): what is a
// frame is forwarded byte for byte, whatever the read boundaries; what is not
// is discarded with a reason.
#include "sidecars/framing.h"

#include <gtest/gtest.h>

namespace cordon::sidecars {
namespace {

struct split {
  std::vector<frame> frames;
  std::vector<discarded> junk;
};

// Feeds `text` in pieces of `chunk` bytes (1: every byte alone).
split feed(protocol p, const std::string& text, std::size_t chunk, std::size_t max = frame_splitter::default_max_frame_bytes) {
  frame_splitter s(p, max);
  split out;
  for (std::size_t i = 0; i < text.size(); i += chunk) s.feed(std::string_view(text).substr(i, chunk), out.frames, out.junk);
  s.finish(out.junk);
  return out;
}

TEST(McpFraming, WholeLinesOfJsonRpcAreFramesWhateverTheReadSize) {
  const std::string a = R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n";
  const std::string b = R"([{"jsonrpc":"2.0","method":"x"}])" "\n";
  for (std::size_t chunk : {1u, 3u, 7u, 4096u}) {
    split s = feed(protocol::mcp, a + b, chunk);
    ASSERT_EQ(s.frames.size(), 2u) << chunk;
    EXPECT_EQ(s.frames[0].bytes, a);
    EXPECT_EQ(s.frames[1].bytes, b);
    EXPECT_EQ(s.frames[0].message["id"], 1);
    EXPECT_TRUE(s.junk.empty());
  }
}

TEST(McpFraming, LinesThatAreNotJsonRpcAreDiscardedWithTheirReason) {
  split s = feed(protocol::mcp,
                 "starting up\n"
                 R"({"id":1,"result":{}})" "\n"
                 R"({"jsonrpc":"1.0","id":1})" "\n"
                 "[]\n"
                 "\n"
                 R"({"jsonrpc":"2.0","id":2,"result":null})" "\n"
                 "partial",
                 5);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0].message["id"], 2);
  ASSERT_EQ(s.junk.size(), 6u);
  EXPECT_EQ(s.junk[0].reason, "not JSON");
  EXPECT_EQ(s.junk[0].sample, "starting up\n");
  EXPECT_EQ(s.junk[1].reason, "not JSON-RPC 2.0");
  EXPECT_EQ(s.junk[2].reason, "not JSON-RPC 2.0");
  EXPECT_EQ(s.junk[3].reason, "not JSON-RPC 2.0");
  EXPECT_EQ(s.junk[4].reason, "empty line");
  EXPECT_EQ(s.junk[5].reason, "partial frame at the end of the stream");
  EXPECT_EQ(s.junk[5].bytes, 7u);
}

TEST(McpFraming, AnOverlongLineIsDiscardedAndTheNextLineStillFrames) {
  const std::string good = R"({"jsonrpc":"2.0","id":3,"result":1})" "\n";
  split s = feed(protocol::mcp, std::string(300, 'x') + "\n" + good, 64, 100);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0].bytes, good);
  ASSERT_EQ(s.junk.size(), 1u);  // one stretch, though it came in five reads
  EXPECT_EQ(s.junk[0].bytes, 301u);
  EXPECT_EQ(s.junk[0].reason, "line longer than 100 bytes");
}

std::string lsp(const std::string& body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }

TEST(LspFraming, ContentLengthFramesAcrossAnyReadBoundary) {
  const std::string a = lsp(R"({"jsonrpc":"2.0","id":1,"result":{"x":"a\r\n\r\nb"}})");
  const std::string b = "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 34\r\n\r\n"
                        R"({"jsonrpc":"2.0","method":"exit"})" " ";
  for (std::size_t chunk : {1u, 2u, 13u, 4096u}) {
    split s = feed(protocol::lsp, a + b, chunk);
    ASSERT_EQ(s.frames.size(), 2u) << chunk;
    EXPECT_EQ(s.frames[0].bytes, a);
    EXPECT_EQ(s.frames[1].bytes, b);
    EXPECT_TRUE(s.junk.empty()) << s.junk[0].reason;
  }
}

TEST(LspFraming, JunkBetweenFramesIsDiscardedAndTheStreamResynchronises) {
  const std::string a = lsp(R"({"jsonrpc":"2.0","id":1,"result":1})");
  const std::string c = lsp(R"({"jsonrpc":"2.0","id":2,"result":2})");
  split s = feed(protocol::lsp,
                 "banner\n" + a + "debug line\n" + "Content-Length: x\r\n\r\n" + lsp("not json") +
                     "Content-Length: 5\r\nX-Extra: 1\r\n\r\n" + c,
                 3);
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_EQ(s.frames[0].bytes, a);
  EXPECT_EQ(s.frames[1].bytes, c);
  std::vector<std::string> reasons;
  for (const auto& j : s.junk) reasons.push_back(j.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"bytes outside a Content-Length frame", "bytes outside a Content-Length frame",
                                               "bad Content-Length", "not JSON", "unknown header 'X-Extra'"}));
  EXPECT_EQ(s.junk[0].sample, "banner\n");  // one stretch, though the reads cut it in three
  EXPECT_EQ(s.junk[1].sample, "debug line\n");
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "bad Content-Length"), reasons.end());
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "not JSON"), reasons.end());
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "unknown header 'X-Extra'"), reasons.end());
}

TEST(LspFraming, ALengthOverTheMaximumIsRefused) {
  split s = feed(protocol::lsp, "Content-Length: 1000\r\n\r\n" + std::string(1000, 'x'), 4096, 100);
  EXPECT_TRUE(s.frames.empty());
  ASSERT_FALSE(s.junk.empty());
  EXPECT_EQ(s.junk[0].reason, "Content-Length over 100 bytes");
}

TEST(LspFraming, HeaderNamesInAnyCaseStartAFrame) {
  // docs/sidecars.md: "header names in any case". A frame whose first header
  // is spelt in lower (or upper) case is a frame, not bytes outside one.
  const std::string body = R"({"jsonrpc":"2.0","id":1,"result":1})";
  for (const std::string name : {"content-length", "CONTENT-LENGTH", "content-Length"}) {
    const std::string f = name + ": " + std::to_string(body.size()) + "\r\n\r\n" + body;
    for (std::size_t chunk : {1u, 4096u}) {
      split s = feed(protocol::lsp, f + f, chunk);
      ASSERT_EQ(s.frames.size(), 2u) << name << " " << chunk;
      EXPECT_EQ(s.frames[0].bytes, f);
      EXPECT_TRUE(s.junk.empty()) << s.junk[0].reason;
    }
  }
}

TEST(RawFraming, EveryByteIsForwarded) {
  split s = feed(protocol::raw, "any\nbytes\0at all", 4);
  std::string all;
  for (const auto& f : s.frames) all += f.bytes;
  EXPECT_EQ(all, "any\nbytes");  // the literal ends at its NUL
  EXPECT_TRUE(s.junk.empty());
}

TEST(Protocols, NamesRoundTrip) {
  for (protocol p : {protocol::mcp, protocol::lsp, protocol::raw}) EXPECT_EQ(protocol_from_string(to_string(p)), p);
  EXPECT_FALSE(protocol_from_string("grpc"));
}

}  // namespace
}  // namespace cordon::sidecars
