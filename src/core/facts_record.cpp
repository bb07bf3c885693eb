// facts_record.cpp — the recorded host facts format (facts_record.h).
#include "core/facts_record.h"

#include "core/strict_json.h"

namespace cordon::core {
namespace {

error invalid_facts(std::vector<policy_error> errors) {
  std::string first = errors.front().location;
  error e = make_error(error_code::parse_error,
                       errors.size() == 1 ? "host facts record is invalid: 1 error"
                                          : "host facts record is invalid: " + std::to_string(errors.size()) + " errors",
                       std::move(first));
  e.errors = std::move(errors);
  return e;
}

}  // namespace

result<facts_reader> facts_reader::open(std::string_view text, std::string_view platform) {
  detail::strict_json parsed = detail::parse_strict_json(text);
  if (!parsed.syntax_ok) {
    return make_error(error_code::parse_error, "host facts record is not JSON: " + parsed.syntax_error,
                      parsed.syntax_location);
  }
  if (!parsed.duplicates.empty()) return invalid_facts(std::move(parsed.duplicates));
  if (!parsed.root.is_object()) return invalid_facts({{"", "a host facts record is a JSON object"}});
  const auto format = parsed.root.find("format");
  if (format == parsed.root.end() || !format->is_string() || format->get<std::string>() != facts_record_format) {
    return invalid_facts({{"/format", "must be \"" + std::string(facts_record_format) + "\""}});
  }
  const auto named = parsed.root.find("platform");
  if (named == parsed.root.end() || !named->is_string()) {
    return invalid_facts({{"/platform", "must name the platform the facts are of (linux, macos, windows)"}});
  }
  if (named->get<std::string>() != platform) {
    error e = make_error(error_code::unsupported_platform, "the host facts record is of " + named->get<std::string>() +
                                                               ", the backend is for " + std::string(platform),
                         "/platform");
    e.blockers.push_back(blocker::for_backend("recorded facts of platform " + named->get<std::string>()));
    return e;
  }
  facts_reader reader(nullptr, "", nullptr);
  reader.root_ = std::make_shared<nlohmann::ordered_json>(std::move(parsed.root));
  reader.own_errors_ = std::make_shared<std::vector<policy_error>>();
  reader.node_ = reader.root_.get();
  reader.errors_ = reader.own_errors_.get();
  reader.seen_ = {"format", "platform"};
  return reader;
}

const nlohmann::ordered_json* facts_reader::field(std::string_view key, nlohmann::ordered_json::value_t type,
                                                  const char* what) {
  seen_.emplace(key);
  const auto it = node_->find(std::string(key));
  if (it == node_->end()) return nullptr;
  const bool number = type == nlohmann::ordered_json::value_t::number_unsigned;
  if (number ? !it->is_number_unsigned() : it->type() != type) {
    errors_->push_back({detail::pointer_join(pointer_, key), std::string("must be ") + what});
    return nullptr;
  }
  return &*it;
}

void facts_reader::boolean(std::string_view key, bool& out) {
  if (const auto* v = field(key, nlohmann::ordered_json::value_t::boolean, "true or false")) out = v->get<bool>();
}

void facts_reader::string(std::string_view key, std::string& out) {
  if (const auto* v = field(key, nlohmann::ordered_json::value_t::string, "a string")) out = v->get<std::string>();
}

void facts_reader::integer(std::string_view key, std::uint64_t max, std::uint64_t& out) {
  const auto* v = field(key, nlohmann::ordered_json::value_t::number_unsigned, "an integer, 0 or more");
  if (v == nullptr) return;
  if (v->get<std::uint64_t>() > max) {
    errors_->push_back({detail::pointer_join(pointer_, key), "must be at most " + std::to_string(max)});
    return;
  }
  out = v->get<std::uint64_t>();
}

void facts_reader::strings(std::string_view key, std::vector<std::string>& out) {
  const auto* a = field(key, nlohmann::ordered_json::value_t::array, "an array of strings");
  if (a == nullptr) return;
  std::vector<std::string> read;
  for (std::size_t i = 0; i < a->size(); ++i) {
    if (!(*a)[i].is_string()) {
      errors_->push_back({detail::pointer_join(detail::pointer_join(pointer_, key), i), "must be a string"});
      return;
    }
    read.push_back((*a)[i].get<std::string>());
  }
  out = std::move(read);
}

void facts_reader::string_pairs(std::string_view key, std::vector<std::pair<std::string, std::string>>& out) {
  const auto* o = field(key, nlohmann::ordered_json::value_t::object, "an object of strings");
  if (o == nullptr) return;
  std::vector<std::pair<std::string, std::string>> read;
  for (const auto& [name, value] : o->items()) {
    if (!value.is_string()) {
      errors_->push_back({detail::pointer_join(detail::pointer_join(pointer_, key), name), "must be a string"});
      return;
    }
    read.emplace_back(name, value.get<std::string>());
  }
  out = std::move(read);
}

void facts_reader::check_unknown() {
  for (const auto& [name, value] : node_->items()) {
    if (!seen_.contains(name)) errors_->push_back({detail::pointer_join(pointer_, name), "unknown field"});
  }
}

result<void> facts_reader::finish() {
  check_unknown();
  if (!errors_->empty()) return invalid_facts(*errors_);
  return ok;
}

nlohmann::ordered_json facts_record(std::string_view platform) {
  return {{"format", std::string(facts_record_format)}, {"platform", std::string(platform)}};
}

}  // namespace cordon::core
