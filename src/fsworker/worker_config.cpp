// worker_config.cpp — the worker's configuration as JSON, and the plan's
// mount table read from its description (worker_config.h).
#include "fsworker/worker_config.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace cordon::fsworker {

fs_result<worker_config> worker_config_from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    worker_config c;
    c.workspace = j.value("workspace", std::string{});
    for (const auto& m : j.at("mounts")) {
      c.mounts.push_back({m.at("kind").get<std::string>(), m.at("path").get<std::string>(),
                          m.at("why").get<std::string>()});
    }
    if (j.contains("limits")) {
      const auto& l = j["limits"];
      c.limits.max_request_bytes = l.value("max_request_bytes", c.limits.max_request_bytes);
      c.limits.max_read_bytes = l.value("max_read_bytes", c.limits.max_read_bytes);
      c.limits.max_file_bytes = l.value("max_file_bytes", c.limits.max_file_bytes);
      c.limits.max_results = l.value("max_results", c.limits.max_results);
      c.limits.deadline = std::chrono::milliseconds(l.value("deadline_ms", c.limits.deadline.count()));
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    return make_fs_error("invalid_config", std::string("worker configuration: ") + e.what());
  }
}

std::string worker_config_to_json(const worker_config& config) {
  nlohmann::json j;
  j["workspace"] = config.workspace;
  j["mounts"] = nlohmann::json::array();
  for (const auto& m : config.mounts) j["mounts"].push_back({{"kind", m.kind}, {"path", m.path}, {"why", m.why}});
  j["limits"] = {{"max_request_bytes", config.limits.max_request_bytes},
                 {"max_read_bytes", config.limits.max_read_bytes},
                 {"max_file_bytes", config.limits.max_file_bytes},
                 {"max_results", config.limits.max_results},
                 {"deadline_ms", config.limits.deadline.count()}};
  return j.dump();
}

std::vector<plan_mount> parse_plan_mounts(const std::string& describe) {
  // Lines are "mount <kind> <path> (<why>)"; a path may hold spaces, so the
  // reason is the last parenthesized group. Symlinks are "symlink /bin -> usr/bin".
  std::vector<plan_mount> mounts;
  std::istringstream in(describe);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("mount ", 0) != 0) continue;
    const std::string rest = line.substr(6);
    const auto space = rest.find(' ');
    if (space == std::string::npos) continue;
    plan_mount m;
    m.kind = rest.substr(0, space);
    std::string tail = rest.substr(space + 1);
    if (m.kind == "symlink") {
      const auto arrow = tail.find(" -> ");
      m.path = tail.substr(0, arrow);
      m.why = "symlink";
    } else {
      const auto open = tail.rfind(" (");
      if (open == std::string::npos || tail.back() != ')') continue;
      m.path = tail.substr(0, open);
      m.why = tail.substr(open + 2, tail.size() - open - 3);
    }
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace cordon::fsworker
