// ops_files.cpp — read, write, edit, format_json, stat, list, apply_patch
// (ops.h, docs/fs-worker.md "Operations").
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "fsworker/ops.h"
#include "fsworker/patch.h"

namespace cordon::fsworker {
namespace {

constexpr std::size_t kMaxJsonNesting = 1000;

// nlohmann's serializer writing into a string that may not grow past `max`:
// pretty-printing can make a file thousands of times larger (indentation
// grows with depth), so the limit is checked while dumping, not after.
struct output_too_large {};
class bounded_output : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  bounded_output(std::string& out, std::size_t max) : out_(out), max_(max) {}
  void write_character(char c) override {
    if (out_.size() >= max_) throw output_too_large{};
    out_.push_back(c);
  }
  void write_characters(const char* s, std::size_t length) override {
    if (length > max_ - out_.size()) throw output_too_large{};
    out_.append(s, length);
  }

 private:
  std::string& out_;
  std::size_t max_;
};

// doc.dump(indent) + "\n", or nullopt when that is longer than `max` bytes.
std::optional<std::string> dump_bounded(const nlohmann::json& doc, unsigned indent, std::size_t max) {
  if (max == 0) return std::nullopt;
  std::string out;
  try {
    nlohmann::detail::serializer<nlohmann::json> s(std::make_shared<bounded_output>(out, max - 1), ' ');
    s.dump(doc, true, false, indent);
  } catch (const output_too_large&) {
    return std::nullopt;
  }
  out += '\n';
  return out;
}

std::string type_name(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  return "device";
}

std::string octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

fs_result<std::optional<mode_t>> mode_field(const nlohmann::json& req) {
  if (!req.contains("mode")) return std::optional<mode_t>{};
  const auto& m = req["mode"];
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    char* end = nullptr;
    const unsigned long v = std::strtoul(s.c_str(), &end, 8);
    if (s.empty() || *end != '\0' || v > 07777) return make_fs_error("invalid_request", "mode must be octal, e.g. \"0644\"");
    return std::optional<mode_t>(static_cast<mode_t>(v));
  }
  if (m.is_number_unsigned() && m.get<std::uint64_t>() <= 07777) return std::optional<mode_t>(m.get<mode_t>());
  return make_fs_error("invalid_request", "mode must be an octal string or a number up to 07777");
}

fs_result<std::string> content_field(const nlohmann::json& req) {
  if (req.contains("content_base64")) {
    auto b = string_field(req, "content_base64", true);
    if (!b) return b.error();
    return base64_decode(*b);
  }
  return string_field(req, "content", true);
}

op_result finish(op_context& ctx, fs_result<std::vector<touched_file>> done, nlohmann::json result = nlohmann::json::object()) {
  if (!done) return done.error();
  ctx.touched = std::move(*done);
  return result;
}

}  // namespace

op_result op_read(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path", "offset", "length", "encoding"}); !k) return k.error();
  auto path = string_field(req, "path", true);
  auto offset = number_field(req, "offset", 0);
  auto length = number_field(req, "length", ctx.limits->max_read_bytes);
  auto encoding = string_field(req, "encoding", false, "text");
  if (!path) return path.error();
  if (!offset) return offset.error();
  if (!length) return length.error();
  if (!encoding) return encoding.error();
  if (*encoding != "text" && *encoding != "base64") return make_fs_error("invalid_request", "encoding is text or base64");
  if (*length > ctx.limits->max_read_bytes) {
    return make_fs_error("too_large", "length is above the worker's read limit of " +
                                          std::to_string(ctx.limits->max_read_bytes) + " bytes");
  }
  auto checked = ctx.paths->check(*path, access_kind::read);
  if (!checked) return checked.error();
  struct stat st {};
  auto fd = open_single_file(*ctx.paths, *checked, st);
  if (!fd) return fd.error();
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 8192)), '\0');
  const ssize_t h = ::pread(fd->get(), head.data(), head.size(), 0);
  if (h < 0) return resolver::from_errno(errno, "read", checked->absolute);
  head.resize(static_cast<std::size_t>(h));
  const std::uint64_t start = std::min(*offset, size);
  std::string data(static_cast<std::size_t>(std::min(*length, size - start)), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::pread(fd->get(), data.data() + got, data.size() - got, static_cast<off_t>(start + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return resolver::from_errno(errno, "read", checked->absolute);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  data.resize(got);
  // A range may end inside a UTF-8 sequence: up to 3 bytes of it are left
  // for the next read rather than making the text look binary.
  std::size_t text_end = data.size();
  if (start + data.size() < size) {
    for (std::size_t back = 1; back <= 3 && back <= data.size(); ++back) {
      const auto c = static_cast<unsigned char>(data[data.size() - back]);
      if ((c & 0xC0) == 0xC0) {
        // A lead byte: cut only when its sequence is longer than what came.
        const std::size_t sequence = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        if (sequence > back) text_end = data.size() - back;
        break;
      }
      if ((c & 0xC0) != 0x80) break;
    }
  }
  const bool binary = head.find('\0') != std::string::npos || !is_valid_utf8(std::string_view(data).substr(0, text_end));
  nlohmann::json result = {{"path", checked->absolute}, {"size", size}, {"offset", start}, {"binary", binary}};
  if (*encoding == "text") {
    if (binary) {
      return make_fs_error("binary_file", checked->absolute + " is binary (a NUL byte or not UTF-8): read it with "
                                                              "\"encoding\": \"base64\"");
    }
    data.resize(text_end);
    result["content"] = data;
  } else {
    result["content_base64"] = base64_encode(data);
  }
  result["bytes"] = data.size();
  result["eof"] = start + data.size() >= size;
  result["sha256"] = sha256_hex(data);
  touched_file t{checked->absolute, "read", size, 0, start == 0 && data.size() == size ? sha256_hex(data) : "", ""};
  ctx.touched.push_back(t);
  return result;
}

op_result op_write(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path", "content", "content_base64", "mode", "create_parents", "expected_sha256",
                                "create_only"});
      !k) {
    return k.error();
  }
  file_change c;
  auto path = string_field(req, "path", true);
  auto content = content_field(req);
  auto mode = mode_field(req);
  auto parents = bool_field(req, "create_parents", false);
  auto create_only = bool_field(req, "create_only", false);
  if (!path) return path.error();
  if (!content) return content.error();
  if (!mode) return mode.error();
  if (!parents) return parents.error();
  if (!create_only) return create_only.error();
  c.path = *path;
  c.content = std::move(*content);
  c.mode = *mode;
  c.create_parents = *parents;
  c.must_not_exist = *create_only;
  if (req.contains("expected_sha256")) {
    auto sha = string_field(req, "expected_sha256", true);
    if (!sha) return sha.error();
    c.expected_sha256 = *sha;
  }
  return finish(ctx, commit_changes(*ctx.paths, {c}, ctx.limits->max_file_bytes, false));
}

op_result op_edit(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path", "old_string", "new_string", "expected_occurrences", "expected_sha256"}); !k) {
    return k.error();
  }
  auto path = string_field(req, "path", true);
  auto old_s = string_field(req, "old_string", true);
  auto new_s = string_field(req, "new_string", true);
  auto expected = number_field(req, "expected_occurrences", 1);
  if (!path) return path.error();
  if (!old_s) return old_s.error();
  if (!new_s) return new_s.error();
  if (!expected) return expected.error();
  if (old_s->empty()) return make_fs_error("invalid_request", "old_string is empty");
  if (*old_s == *new_s) return make_fs_error("invalid_request", "old_string and new_string are the same");
  if (auto c = ctx.paths->check(*path, access_kind::write); !c) return c.error();
  auto content = read_whole_file(*ctx.paths, *path, ctx.limits->max_file_bytes);
  if (!content) return content.error();
  const std::string before_sha = sha256_hex(*content);
  if (req.contains("expected_sha256")) {
    auto sha = string_field(req, "expected_sha256", true);
    if (!sha) return sha.error();
    if (*sha != before_sha) return make_fs_error("stale_content", *path + " has changed: its SHA-256 is not expected_sha256");
  }
  // Counted first: the result's size is known before anything is built, and
  // one above the file limit is refused without building it.
  std::uint64_t count = 0;
  for (std::size_t at = 0, hit; (hit = content->find(*old_s, at)) != std::string::npos; at = hit + old_s->size()) ++count;
  if (count != *expected) {
    fs_error e = make_fs_error("occurrence_mismatch", "old_string occurs " + std::to_string(count) +
                                                          " times, expected_occurrences is " + std::to_string(*expected));
    return e;
  }
  const std::uint64_t kept = content->size() - count * old_s->size();
  const std::uint64_t room = ctx.limits->max_file_bytes > kept ? ctx.limits->max_file_bytes - kept : 0;
  if (kept > ctx.limits->max_file_bytes || (!new_s->empty() && count > room / new_s->size())) {
    return make_fs_error("file_too_large", "the edited " + *path + " would be larger than the worker's file limit");
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(kept + count * new_s->size()));
  std::size_t at = 0;
  for (std::size_t hit; (hit = content->find(*old_s, at)) != std::string::npos; at = hit + old_s->size()) {
    out.append(*content, at, hit - at);
    out += *new_s;
  }
  out.append(*content, at, std::string::npos);
  file_change c;
  c.path = *path;
  c.content = std::move(out);
  c.expected_sha256 = before_sha;  // refused if the file changed since it was read
  c.must_exist = true;
  return finish(ctx, commit_changes(*ctx.paths, {c}, ctx.limits->max_file_bytes, false), {{"replacements", count}});
}

op_result op_format_json(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path", "indent", "expected_sha256"}); !k) return k.error();
  auto path = string_field(req, "path", true);
  auto indent = number_field(req, "indent", 2);
  if (!path) return path.error();
  if (!indent) return indent.error();
  if (*indent > 16) return make_fs_error("invalid_request", "indent is at most 16");
  if (auto c = ctx.paths->check(*path, access_kind::write); !c) return c.error();
  auto content = read_whole_file(*ctx.paths, *path, ctx.limits->max_file_bytes);
  if (!content) return content.error();
  // Parsing takes any depth, dumping recurses once per level.
  if (json_nesting_exceeds(*content, kMaxJsonNesting)) {
    return make_fs_error("invalid_json_content", *path + " nests deeper than " + std::to_string(kMaxJsonNesting) +
                                                     " levels: not reformatted");
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(*content);
  } catch (const nlohmann::json::exception& e) {
    return make_fs_error("invalid_json_content", *path + " is not JSON: " + e.what());
  }
  file_change c;
  c.path = *path;
  auto formatted = dump_bounded(doc, static_cast<unsigned>(*indent), ctx.limits->max_file_bytes);
  if (!formatted) {
    return make_fs_error("file_too_large", "the formatted " + *path + " would be larger than the worker's file limit");
  }
  c.content = std::move(*formatted);
  c.expected_sha256 = sha256_hex(*content);
  if (req.contains("expected_sha256")) {
    auto sha = string_field(req, "expected_sha256", true);
    if (!sha) return sha.error();
    if (*sha != *c.expected_sha256) return make_fs_error("stale_content", *path + " has changed: its SHA-256 is not expected_sha256");
  }
  c.must_exist = true;
  return finish(ctx, commit_changes(*ctx.paths, {c}, ctx.limits->max_file_bytes, false));
}

op_result op_stat(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path"}); !k) return k.error();
  auto path = string_field(req, "path", true);
  if (!path) return path.error();
  auto checked = ctx.paths->check(*path, access_kind::read);
  if (!checked) return checked.error();
  auto fd = ctx.paths->open(*checked, O_PATH);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return resolver::from_errno(errno, "stat", checked->absolute);
  if (S_ISLNK(st.st_mode)) return resolver::from_errno(ELOOP, "stat", checked->absolute);
  if (S_ISREG(st.st_mode) && st.st_nlink > 1) return hard_link_error(checked->absolute, st.st_nlink);
  return nlohmann::json{{"path", checked->absolute},
                        {"type", type_name(st.st_mode)},
                        {"size", static_cast<std::uint64_t>(st.st_size)},
                        {"mode", octal(st.st_mode)},
                        {"nlink", static_cast<std::uint64_t>(st.st_nlink)},
                        {"mtime_ns", static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec}};
}

op_result op_list(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"path", "max_results"}); !k) return k.error();
  auto path = string_field(req, "path", false, ".");
  auto cap = number_field(req, "max_results", 1000);
  if (!path) return path.error();
  if (!cap) return cap.error();
  const std::uint64_t limit = std::min<std::uint64_t>(*cap, ctx.limits->max_results);
  auto checked = ctx.paths->check(*path, access_kind::read);
  if (!checked) return checked.error();
  auto fd = ctx.paths->open(*checked, O_RDONLY | O_DIRECTORY);
  if (!fd) return fd.error();
  DIR* dir = ::fdopendir(fd->release());
  if (dir == nullptr) return resolver::from_errno(errno, "list", checked->absolute);
  nlohmann::json entries = nlohmann::json::array();
  std::uint64_t non_utf8 = 0;
  bool truncated = false;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (!is_valid_utf8(name)) {
      ++non_utf8;
      continue;
    }
    if (entries.size() >= limit) {
      truncated = true;
      break;
    }
    nlohmann::json entry = {{"name", name}};
    struct stat st {};
    if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      entry["type"] = type_name(st.st_mode);
      entry["size"] = static_cast<std::uint64_t>(st.st_size);
      if (S_ISREG(st.st_mode) && st.st_nlink > 1) entry["hard_link"] = true;
    }
    const std::string child = (checked->absolute == "/" ? "" : checked->absolute) + "/" + name;
    if (auto c = ctx.paths->check(child, access_kind::read); !c) entry["refused"] = c.error().code;
    entries.push_back(std::move(entry));
  }
  ::closedir(dir);
  return nlohmann::json{{"path", checked->absolute}, {"entries", entries}, {"truncated", truncated},
                        {"skipped_non_utf8", non_utf8}};
}

op_result op_apply_patch(op_context& ctx, const nlohmann::json& req) {
  if (auto k = check_keys(req, {"patch", "dry_run"}); !k) return k.error();
  auto text = string_field(req, "patch", true);
  auto dry = bool_field(req, "dry_run", false);
  if (!text) return text.error();
  if (!dry) return dry.error();
  auto files = parse_patch(*text);
  if (!files) return files.error();
  std::vector<file_change> changes;
  std::string diff;
  for (const auto& f : *files) {
    auto target = ctx.paths->check(f.path, access_kind::write);
    if (!target) return target.error();
    const std::string& abs = target->absolute;
    if (f.what == patch_file::kind::add) {
      file_change c;
      c.path = f.path;
      c.content = f.content;
      c.must_not_exist = true;
      c.create_parents = true;
      diff += unified_diff(abs, "", abs, f.content, false, true);
      changes.push_back(std::move(c));
      continue;
    }
    struct stat st {};
    auto content = read_whole_file(*ctx.paths, f.path, ctx.limits->max_file_bytes, &st);
    if (!content) return content.error();
    if (f.what == patch_file::kind::remove) {
      file_change c;
      c.path = f.path;
      c.remove = true;
      c.expected_sha256 = sha256_hex(*content);
      diff += unified_diff(abs, *content, abs, "", true, false);
      changes.push_back(std::move(c));
      continue;
    }
    auto updated = apply_hunks(*content, f.hunks, abs);
    if (!updated) return updated.error();
    file_change c;
    c.path = f.move_to.empty() ? f.path : f.move_to;
    c.content = *updated;
    if (f.move_to.empty()) {
      c.expected_sha256 = sha256_hex(*content);
      c.must_exist = true;
      diff += unified_diff(abs, *content, abs, *updated, true, true);
      changes.push_back(std::move(c));
    } else {
      auto dest = ctx.paths->check(f.move_to, access_kind::write);
      if (!dest) return dest.error();
      c.must_not_exist = true;
      c.create_parents = true;
      c.mode = st.st_mode & 07777;
      file_change gone;
      gone.path = f.path;
      gone.remove = true;
      gone.expected_sha256 = sha256_hex(*content);
      diff += unified_diff(abs, *content, dest->absolute, *updated, true, true);
      changes.push_back(std::move(gone));
      changes.push_back(std::move(c));
    }
  }
  nlohmann::json result = {{"files", changes.size()}, {"dry_run", *dry}};
  if (*dry) result["diff"] = diff;
  return finish(ctx, commit_changes(*ctx.paths, changes, ctx.limits->max_file_bytes, *dry), result);
}

}  // namespace cordon::fsworker
