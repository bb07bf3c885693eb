// src/core/blocker.cpp — typed compile blockers and their stable spellings (docs/errors.md).
#include "cordon/result.h"

namespace cordon {

blocker blocker::for_control(cordon::control which, enforcement_level required, enforcement_level available,
                             std::string reason) {
  blocker b;
  b.control = which;
  b.required = required;
  b.available = available;
  b.reason = std::move(reason);
  return b;
}

blocker blocker::for_backend(std::string reason) {
  blocker b;
  b.subject = blocker_subject::backend;
  b.reason = std::move(reason);
  return b;
}

blocker blocker::for_isolation(isolation_level required, isolation_level available, std::string reason) {
  blocker b;
  b.subject = blocker_subject::isolation;
  b.required_isolation = required;
  b.available_isolation = available;
  b.reason = std::move(reason);
  return b;
}

std::string blocker::subject_name() const {
  switch (subject) {
    case blocker_subject::control: return std::string(to_string(control));
    case blocker_subject::backend: return "backend";
    case blocker_subject::isolation: return "isolation";
  }
  return "backend";
}

std::string blocker::required_name() const {
  switch (subject) {
    case blocker_subject::control: return std::string(to_string(required));
    case blocker_subject::backend: return "available";
    case blocker_subject::isolation: return std::string(to_string(required_isolation));
  }
  return "available";
}

std::string blocker::available_name() const {
  switch (subject) {
    case blocker_subject::control: return std::string(to_string(available));
    case blocker_subject::backend: return "unavailable";
    case blocker_subject::isolation: return std::string(to_string(available_isolation));
  }
  return "unavailable";
}

}  // namespace cordon
