// worker.cpp — framing, dispatch and evidence of the worker (worker.h).
#include "fsworker/worker.h"

#include <unistd.h>

#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include "fsworker/ops.h"

namespace cordon::fsworker {
namespace {

using op_fn = op_result (*)(op_context&, const nlohmann::json&);

constexpr std::size_t kMaxRequestNesting = 256;

const std::map<std::string, op_fn, std::less<>>& operations() {
  static const std::map<std::string, op_fn, std::less<>> ops = {
      {"read", op_read},   {"write", op_write}, {"edit", op_edit},   {"format_json", op_format_json},
      {"stat", op_stat},   {"list", op_list},   {"glob", op_glob},   {"grep", op_grep},
      {"apply_patch", op_apply_patch},
  };
  return ops;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json error_json(const fs_error& e) {
  nlohmann::json j = {{"code", e.code}, {"message", e.message}};
  if (!e.rule.empty()) j["rule"] = e.rule;
  if (e.sys_errno != 0) j["errno"] = e.sys_errno;
  return j;
}

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string worker::too_large() {
  ++requests_, ++failed_;
  return dump({{"id", nullptr}, {"ok", false},
               {"error", error_json(make_fs_error("request_too_large", "the request line is longer than " +
                                                                           std::to_string(limits_.max_request_bytes) +
                                                                           " bytes"))}});
}

std::string worker::handle_line(std::string_view line) {
  ++requests_;
  nlohmann::json id = nullptr;
  auto fail = [&](const fs_error& e) {
    ++failed_;
    return dump({{"id", id}, {"ok", false}, {"error", error_json(e)}});
  };
  // JSON text is UTF-8; a path that is not cannot be named (fail closed).
  if (!is_valid_utf8(line)) return fail(make_fs_error("non_utf8", "the request is not valid UTF-8 (paths must be UTF-8)"));
  // Requests are flat; the echoed id may be any JSON value, but not one deep
  // enough to overflow the stack when it is copied and dumped.
  if (json_nesting_exceeds(line, kMaxRequestNesting)) {
    return fail(make_fs_error("invalid_request", "the request nests deeper than " +
                                                     std::to_string(kMaxRequestNesting) + " levels"));
  }
  nlohmann::json req;
  try {
    req = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    return fail(make_fs_error("invalid_request", std::string("not JSON: ") + e.what()));
  }
  if (!req.is_object()) return fail(make_fs_error("invalid_request", "a request is a JSON object"));
  if (req.contains("id")) id = req["id"];
  if (!req.contains("op") || !req["op"].is_string()) return fail(make_fs_error("invalid_request", "missing \"op\""));
  const auto& ops = operations();
  const auto found = ops.find(req["op"].get<std::string>());
  if (found == ops.end()) return fail(make_fs_error("unknown_op", "no operation " + req["op"].get<std::string>()));
  op_context ctx;
  ctx.paths = &paths_;
  ctx.limits = &limits_;
  ctx.deadline = std::chrono::steady_clock::now() + limits_.deadline;
  op_result r = make_fs_error("io_error", "not run");
  try {
    r = found->second(ctx, req);
  } catch (const std::exception& e) {
    // nlohmann's type errors and allocation failures: refused, never half-done
    // (every write goes through commit_changes, which cleans up on the way out).
    r = make_fs_error("invalid_request", std::string("request failed: ") + e.what());
  }
  if (!r) return fail(r.error());
  nlohmann::json touched = nlohmann::json::array();
  for (const auto& t : ctx.touched) {
    touched.push_back(touched_to_json(t));
    const bool dry = r->contains("dry_run") && (*r)["dry_run"].get<bool>();
    if (t.action != "read" && t.action != "unchanged" && !dry) writes_.push_back(t);
  }
  return dump({{"id", id}, {"ok", true}, {"result", std::move(*r)}, {"touched", touched}});
}

std::string worker::final_report() const {
  nlohmann::json writes = nlohmann::json::array();
  for (const auto& t : writes_) writes.push_back(touched_to_json(t));
  return dump({{"report",
                {{"requests", requests_}, {"failed", failed_}, {"resolution", resolver::method()}, {"writes", writes}}}});
}

int serve(worker& w, int in_fd, int out_fd, std::size_t max_request_bytes) {
  std::string pending;
  bool discarding = false;  // inside a line that is already too long
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(in_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::size_t start = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      if (buffer[i] != '\n') continue;
      std::string out;
      if (discarding) {
        discarding = false;
        out = w.too_large();
      } else {
        pending.append(buffer + start, i - start);
        if (pending.size() > max_request_bytes) {
          out = w.too_large();
        } else if (!pending.empty()) {
          out = w.handle_line(pending);
        }
      }
      pending.clear();
      start = i + 1;
      if (!out.empty() && !write_all(out_fd, out + "\n")) return 1;
    }
    if (!discarding) {
      pending.append(buffer + start, static_cast<std::size_t>(n) - start);
      if (pending.size() > max_request_bytes) {
        discarding = true;
        pending.clear();
        pending.shrink_to_fit();
      }
    }
  }
  return write_all(out_fd, w.final_report() + "\n") ? 0 : 1;
}

}  // namespace cordon::fsworker
