// framing.cpp — the frame splitter of framing.h.
#include "sidecars/framing.h"

#include <algorithm>
#include <cctype>

namespace cordon::sidecars {

std::string_view to_string(protocol p) noexcept {
  switch (p) {
    case protocol::mcp: return "mcp";
    case protocol::lsp: return "lsp";
    case protocol::raw: return "raw";
  }
  return "raw";
}

std::optional<protocol> protocol_from_string(std::string_view name) noexcept {
  if (name == "mcp") return protocol::mcp;
  if (name == "lsp") return protocol::lsp;
  if (name == "raw") return protocol::raw;
  return std::nullopt;
}

namespace {

bool is_message(const nlohmann::json& m) {
  if (!m.is_object()) return false;
  auto v = m.find("jsonrpc");
  return v != m.end() && v->is_string() && v->get_ref<const std::string&>() == "2.0";
}

// Why `body` is not a JSON-RPC message, or empty when it is one (then `out` holds it).
std::string check_body(std::string_view body, nlohmann::json& out) {
  out = nlohmann::json::parse(body, nullptr, false);
  if (out.is_discarded()) return "not JSON";
  if (!is_json_rpc(out)) return "not JSON-RPC 2.0";
  return {};
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// LSP header blocks are short; a "header" longer than this is not one.
constexpr std::size_t max_header_bytes = 1024;
// Header names are matched in any case (docs/sidecars.md), here too.
constexpr std::string_view header_start = "content-";
constexpr std::string_view length_header = "content-length:";

bool equal_ci(std::string_view a, std::string_view lower_b) {
  return a.size() == lower_b.size() &&
         std::equal(a.begin(), a.end(), lower_b.begin(), [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == y; });
}

// The first "Content-Length:" (any case) in `s` at or after `from`.
std::size_t find_length_header(std::string_view s, std::size_t from) {
  for (std::size_t i = from; i + length_header.size() <= s.size(); ++i) {
    if (equal_ci(s.substr(i, length_header.size()), length_header)) return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool is_json_rpc(const nlohmann::json& message) {
  if (message.is_array()) {
    return !message.empty() && std::all_of(message.begin(), message.end(), is_message);
  }
  return is_message(message);
}

frame_splitter::frame_splitter(protocol p, std::size_t max_frame_bytes) : protocol_(p), max_frame_(max_frame_bytes) {}

void frame_splitter::drop(std::size_t count, std::string reason, std::vector<discarded>& junk, bool mergeable) {
  std::string_view gone(buffer_.data() + start_, count);
  start_ += count;
  // Bytes outside frames come in pieces the reads happen to cut; one stretch
  // of them between two frames is one discarded stretch, whatever the reads.
  if (mergeable && open_ && open_->reason == reason) {
    open_->bytes += count;
    if (open_->sample.size() < sample_bytes) open_->sample += gone.substr(0, sample_bytes - open_->sample.size());
    return;
  }
  flush(junk);
  discarded d{count, std::move(reason), std::string(gone.substr(0, sample_bytes))};
  if (mergeable) open_ = std::move(d);
  else junk.push_back(std::move(d));
}

void frame_splitter::flush(std::vector<discarded>& junk) {
  if (open_) junk.push_back(std::move(*open_));
  open_.reset();
}

void frame_splitter::emit(std::size_t length, nlohmann::json message, std::vector<frame>& frames,
                          std::vector<discarded>& junk) {
  flush(junk);
  frames.push_back({buffer_.substr(start_, length), std::move(message)});
  start_ += length;
}

void frame_splitter::compact() {
  // Consumed bytes are erased only once they are most of the buffer, so that
  // many small frames in one read cost one move, not one each.
  if (start_ > 0 && start_ * 2 >= buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
}

void frame_splitter::feed(std::string_view bytes, std::vector<frame>& frames, std::vector<discarded>& junk) {
  if (protocol_ == protocol::raw) {
    if (!bytes.empty()) frames.push_back({std::string(bytes), nullptr});
    return;
  }
  buffer_.append(bytes);
  if (protocol_ == protocol::mcp) {
    while (next_mcp(frames, junk)) {
    }
  } else {
    while (next_lsp(frames, junk)) {
    }
  }
  compact();
}

bool frame_splitter::next_mcp(std::vector<frame>& frames, std::vector<discarded>& junk) {
  std::string_view rest(buffer_.data() + start_, buffer_.size() - start_);
  std::size_t nl = rest.find('\n', scanned_);
  if (nl == std::string_view::npos) {
    scanned_ = rest.size();
    if (rest.size() > max_frame_) {  // an over-long line: drop what came, and the rest of it later
      drop(rest.size(), "line longer than " + std::to_string(max_frame_) + " bytes", junk, true);
      discarding_line_ = true;
      scanned_ = 0;
    }
    return false;
  }
  scanned_ = 0;
  const std::size_t length = nl + 1;
  if (discarding_line_) {
    discarding_line_ = false;
    drop(length, "line longer than " + std::to_string(max_frame_) + " bytes", junk, true);
    return true;
  }
  std::string_view line = rest.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  nlohmann::json message;
  std::string why = line.empty() ? "empty line" : check_body(line, message);
  if (!why.empty()) {
    drop(length, std::move(why), junk);
    return true;
  }
  emit(length, std::move(message), frames, junk);
  return true;
}

bool frame_splitter::next_lsp(std::vector<frame>& frames, std::vector<discarded>& junk) {
  std::string_view rest(buffer_.data() + start_, buffer_.size() - start_);
  if (rest.empty()) return false;
  // Not at a header: drop up to the next one (or all but a possible start of one).
  if (!equal_ci(rest.substr(0, std::min(rest.size(), header_start.size())),
                header_start.substr(0, std::min(rest.size(), header_start.size())))) {
    std::size_t next = find_length_header(rest, 1);
    if (next == std::string_view::npos) {
      std::size_t keep = std::min(rest.size() - 1, header_start.size() - 1);
      // Keep a tail that may be the beginning of a header split across reads.
      std::size_t tail = rest.size();
      for (std::size_t k = keep; k > 0; --k) {
        if (equal_ci(rest.substr(rest.size() - k), header_start.substr(0, k))) {
          tail = rest.size() - k;
          break;
        }
      }
      if (tail == 0) return false;
      drop(tail, "bytes outside a Content-Length frame", junk, true);
      return false;
    }
    drop(next, "bytes outside a Content-Length frame", junk, true);
    return true;
  }
  std::size_t end = rest.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (rest.size() > max_header_bytes) {
      std::size_t next = find_length_header(rest, 1);
      drop(next == std::string_view::npos ? rest.size() : next, "header block without an end", junk);
      return true;
    }
    return false;
  }
  // Parse "Name: value" lines; Content-Length is required, Content-Type optional.
  std::optional<std::size_t> length;
  std::string why;
  std::string_view headers = rest.substr(0, end);
  for (std::size_t pos = 0; pos <= headers.size() && why.empty();) {
    std::size_t eol = headers.find("\r\n", pos);
    std::string_view line = headers.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? headers.size() + 1 : eol + 2;
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      why = "malformed header line";
      break;
    }
    std::string name = lower(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (name == "content-length") {
      if (length || value.empty() || value.size() > 12 ||
          !std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
        why = "bad Content-Length";
      } else {
        length = std::stoull(std::string(value));
      }
    } else if (name != "content-type") {
      why = "unknown header '" + std::string(line.substr(0, colon)) + "'";
    }
  }
  if (why.empty() && !length) why = "no Content-Length header";
  if (why.empty() && *length > max_frame_) why = "Content-Length over " + std::to_string(max_frame_) + " bytes";
  if (!why.empty()) {
    drop(end + 4, std::move(why), junk);
    return true;
  }
  const std::size_t total = end + 4 + *length;
  if (rest.size() < total) return false;
  nlohmann::json message;
  why = check_body(rest.substr(end + 4, *length), message);
  if (!why.empty()) {
    drop(total, std::move(why), junk);
    return true;
  }
  emit(total, std::move(message), frames, junk);
  return true;
}

void frame_splitter::finish(std::vector<discarded>& junk) {
  if (buffered() > 0) {
    drop(buffered(), discarding_line_ ? "line longer than " + std::to_string(max_frame_) + " bytes"
                                      : "partial frame at the end of the stream",
         junk, discarding_line_);
  }
  flush(junk);
  discarding_line_ = false;
  scanned_ = 0;
  compact();
}

}  // namespace cordon::sidecars
