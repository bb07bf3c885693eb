// src/windows/lease_record.cpp — see lease_record.h.
#include "windows/lease_record.h"

#include <nlohmann/json.hpp>
#include <set>

namespace cordon::windows::detail {
namespace {

using nlohmann::json;

error bad(const std::string& where, const std::string& why) {
  return make_error(error_code::invalid_policy, "lease record: " + why, where);
}

// Checks that `object` has exactly the keys `expected`.
std::optional<error> exact_keys(const json& object, const std::string& where, std::set<std::string> expected) {
  if (!object.is_object()) return bad(where, "expected an object");
  for (const auto& [key, value] : object.items()) {
    if (!expected.erase(key)) return bad(where + "/" + key, "unknown field");
  }
  if (!expected.empty()) return bad(where + "/" + *expected.begin(), "missing field");
  return std::nullopt;
}

template <class T>
std::optional<error> read(const json& object, const std::string& key, const std::string& where, T& out) {
  const json& v = object.at(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return bad(where + "/" + key, "expected a string");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return bad(where + "/" + key, "expected a boolean");
  } else {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      return bad(where + "/" + key, "expected a non-negative integer");
    }
  }
  out = v.get<T>();
  return std::nullopt;
}

}  // namespace

bool lease_record::complete() const noexcept {
  for (const auto& e : entries) {
    if (e.state != lease_state::restored) return false;
  }
  return true;
}

std::string lease_record_to_json(const lease_record& r) {
  json entries = json::array();
  for (const auto& e : r.entries) {
    entries.push_back({{"path", e.path},
                       {"file_id", e.file_id},
                       {"original_sddl", e.original_sddl},
                       {"dacl_protected", e.dacl_protected},
                       {"state", e.state == lease_state::restored ? "restored" : "pending"},
                       {"attempts", e.attempts}});
  }
  json doc = {{"format", lease_format},
              {"version", lease_format_version},
              {"owner", {{"pid", r.owner_pid}, {"start_time", r.owner_start_time}, {"plan", r.plan_identity}}},
              {"appcontainer", {{"name", r.appcontainer_name}, {"sid", r.appcontainer_sid}}},
              {"created", r.created},
              {"entries", entries}};
  return doc.dump(1) + "\n";
}

result<lease_record> lease_record_from_json(std::string_view text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return make_error(error_code::parse_error, "lease record is not JSON");
  if (auto e = exact_keys(doc, "", {"format", "version", "owner", "appcontainer", "created", "entries"})) return *e;
  if (doc["format"] != lease_format) return bad("/format", "not a cordon DACL lease");
  if (doc["version"] != lease_format_version) return bad("/version", "unsupported lease format version");
  lease_record r;
  const json& owner = doc["owner"];
  if (auto e = exact_keys(owner, "/owner", {"pid", "start_time", "plan"})) return *e;
  if (auto e = read(owner, "pid", "/owner", r.owner_pid)) return *e;
  if (auto e = read(owner, "start_time", "/owner", r.owner_start_time)) return *e;
  if (auto e = read(owner, "plan", "/owner", r.plan_identity)) return *e;
  const json& ac = doc["appcontainer"];
  if (auto e = exact_keys(ac, "/appcontainer", {"name", "sid"})) return *e;
  if (auto e = read(ac, "name", "/appcontainer", r.appcontainer_name)) return *e;
  if (auto e = read(ac, "sid", "/appcontainer", r.appcontainer_sid)) return *e;
  if (!doc["created"].is_array()) return bad("/created", "expected an array");
  for (std::size_t i = 0; i < doc["created"].size(); ++i) {
    if (!doc["created"][i].is_string()) return bad("/created/" + std::to_string(i), "expected a string");
    r.created.push_back(doc["created"][i].get<std::string>());
  }
  if (!doc["entries"].is_array()) return bad("/entries", "expected an array");
  for (std::size_t i = 0; i < doc["entries"].size(); ++i) {
    const json& j = doc["entries"][i];
    const std::string at = "/entries/" + std::to_string(i);
    if (auto e = exact_keys(j, at, {"path", "file_id", "original_sddl", "dacl_protected", "state", "attempts"})) return *e;
    lease_entry entry;
    std::string state;
    std::uint32_t attempts = 0;
    if (auto e = read(j, "path", at, entry.path)) return *e;
    if (auto e = read(j, "file_id", at, entry.file_id)) return *e;
    if (auto e = read(j, "original_sddl", at, entry.original_sddl)) return *e;
    if (auto e = read(j, "dacl_protected", at, entry.dacl_protected)) return *e;
    if (auto e = read(j, "state", at, state)) return *e;
    if (auto e = read(j, "attempts", at, attempts)) return *e;
    if (state != "pending" && state != "restored") return bad(at + "/state", "expected \"pending\" or \"restored\"");
    if (entry.path.empty() || (entry.original_sddl.rfind("D:", 0) != 0 && entry.original_sddl.rfind("S:", 0) != 0)) {
      return bad(at, "an entry needs a path and an SDDL DACL (\"D:...\") or mandatory label (\"S:...\")");
    }
    entry.state = state == "restored" ? lease_state::restored : lease_state::pending;
    entry.attempts = static_cast<int>(attempts);
    r.entries.push_back(std::move(entry));
  }
  return r;
}

std::size_t restore_entries(lease_record& record, const std::function<result<void>(const lease_entry&)>& restore,
                            std::vector<std::string>& failures) {
  std::size_t pending = 0;
  for (auto it = record.entries.rbegin(); it != record.entries.rend(); ++it) {
    if (it->state == lease_state::restored) continue;
    for (int attempt = 0; attempt < max_restore_attempts; ++attempt) {
      auto done = restore(*it);
      if (done) {
        it->state = lease_state::restored;
        break;
      }
      ++it->attempts;
      if (attempt + 1 == max_restore_attempts) failures.push_back(it->path + ": " + done.error_value().describe());
    }
    if (it->state != lease_state::restored) ++pending;
  }
  return pending;
}

}  // namespace cordon::windows::detail
