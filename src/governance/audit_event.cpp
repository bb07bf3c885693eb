// audit_event.cpp — events, their canonical JSON, the in-memory sink.
#include <cstdio>
#include <ctime>

#include "cordon/governance/audit.h"
#include "core/utc_time.h"
#include "governance/json_util.h"

namespace cordon::governance {

std::string audit_timestamp_now() { return cordon::detail::utc_timestamp_ms_now(); }

audit_event make_audit_event(std::string module, std::string event, std::string outcome) {
  audit_event e;
  e.module = std::move(module);
  e.event = std::move(event);
  e.outcome = std::move(outcome);
  e.timestamp = audit_timestamp_now();
  return e;
}

namespace detail {

json audit_event_value(const audit_event& e) {
  json documents = json::object();
  for (const auto& [name, text] : e.documents) {
    json parsed = json::parse(text, nullptr, false);
    documents[name] = parsed.is_discarded() ? json(text) : parsed;
  }
  return {{"module", e.module},         {"event", e.event},          {"ids", e.ids},
          {"outcome", e.outcome},       {"timestamp", e.timestamp},  {"elapsed_ms", e.elapsed_ms},
          {"attributes", e.attributes}, {"documents", documents}};
}

}  // namespace detail

std::string audit_event_json(const audit_event& event) {
  return detail::canonical(detail::audit_event_value(event));
}

bool ends_run(std::string_view event) noexcept {
  return event == "run.completed" || event == "run.failed" || event == "run.cancelled" || event == "run.timeout" ||
         event == "run.refused";
}

result<void> in_memory_audit_sink::append(const audit_event& event) {
  std::lock_guard lock(mutex_);
  events_.push_back(event);
  return ok;
}

std::vector<audit_event> in_memory_audit_sink::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

std::vector<audit_event> in_memory_audit_sink::named(std::string_view event) const {
  std::lock_guard lock(mutex_);
  std::vector<audit_event> out;
  for (const auto& e : events_) {
    if (e.event == event) out.push_back(e);
  }
  return out;
}

}  // namespace cordon::governance
