// ops_common.cpp — request field helpers, evidence JSON, base64, binary
// detection (ops.h).
#include <algorithm>

#include "fsworker/ops.h"

namespace cordon::fsworker {

fs_status check_keys(const nlohmann::json& req, std::initializer_list<const char*> allowed) {
  // An unknown key is an error, not ignored: a misspelt "dry_rn" must not
  // turn a dry run into a write.
  for (const auto& item : req.items()) {
    const std::string& key = item.key();
    if (key == "id" || key == "op") continue;
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      return make_fs_error("invalid_request", "unknown field \"" + key + "\" for this operation");
    }
  }
  return fs_ok{};
}

fs_result<std::string> string_field(const nlohmann::json& req, const char* key, bool required,
                                    const std::string& fallback) {
  if (!req.contains(key)) {
    if (required) return make_fs_error("invalid_request", std::string("missing field \"") + key + "\"");
    return fallback;
  }
  if (!req[key].is_string()) return make_fs_error("invalid_request", std::string("\"") + key + "\" must be a string");
  return req[key].get<std::string>();
}

fs_result<std::uint64_t> number_field(const nlohmann::json& req, const char* key, std::uint64_t fallback) {
  if (!req.contains(key)) return fallback;
  if (!req[key].is_number_unsigned()) {
    return make_fs_error("invalid_request", std::string("\"") + key + "\" must be a non-negative integer");
  }
  return req[key].get<std::uint64_t>();
}

fs_result<bool> bool_field(const nlohmann::json& req, const char* key, bool fallback) {
  if (!req.contains(key)) return fallback;
  if (!req[key].is_boolean()) return make_fs_error("invalid_request", std::string("\"") + key + "\" must be a boolean");
  return req[key].get<bool>();
}

nlohmann::json touched_to_json(const touched_file& t) {
  return {{"path", t.path},
          {"action", t.action},
          {"bytes_before", t.bytes_before},
          {"bytes_after", t.bytes_after},
          {"sha256_before", t.sha256_before},
          {"sha256_after", t.sha256_after}};
}

bool looks_binary(const std::string& data) {
  return data.substr(0, 8192).find('\0') != std::string::npos || !is_valid_utf8(data);
}

bool json_nesting_exceeds(std::string_view text, std::size_t limit) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(const std::string& data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8) |
                            static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(v >> 18) & 63], out += kAlphabet[(v >> 12) & 63], out += kAlphabet[(v >> 6) & 63],
        out += kAlphabet[v & 63];
  }
  if (i < data.size()) {
    std::uint32_t v = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63], out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

fs_result<std::string> base64_decode(const std::string& text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (char c : text) {
    if (c == '=') {
      ++pad;
      continue;
    }
    const char* p = std::find(kAlphabet, kAlphabet + 64, c);
    if (p == kAlphabet + 64 || pad > 0) return make_fs_error("invalid_request", "content_base64 is not base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (pad > 2 || (text.size() % 4) != 0) return make_fs_error("invalid_request", "content_base64 is not base64");
  return out;
}

}  // namespace cordon::fsworker
