// cordon/host_facts.h — what a host offers, as plain data.
//
// A plan is a pure function of a policy and these facts (docs/architecture.md,
// "Host facts"): the compile driver never reads the kernel, the filesystem's
// cgroup layout or the environment itself. A backend reads the facts of the
// running host with `sandbox_backend::read_host_facts()`; tests build them by
// hand to compile golden plans for hosts they do not run on
// (tests/unit/linux/golden_plan_test.cpp), and recorded facts files load into
// them (sandbox_backend::load_host_facts, docs/host-facts.md). The fields here
// are the ones every backend has; each backend's own facts are its own type,
// carried in `backend_facts`.
#pragma once

#include <any>
#include <string>
#include <vector>

namespace cordon {

struct host_facts {
  std::string platform;       // "linux", "macos", "windows"
  unsigned uid = 0, gid = 0;  // the calling user
  std::string home;           // absolute home directory of the calling user; empty when unknown
  // The workspace recorded with facts of another host (a recorded facts
  // file's, the Windows reference shape's "C:\Users\user\work"), in that
  // platform's spelling; `cordon policy explain --platform` compiles for it
  // when no --workspace is given. Empty: the caller chooses (the running host).
  std::string workspace;

  // True for facts loaded from a record (sandbox_backend::load_host_facts):
  // they describe a host, never prove one. A plan compiled from them carries
  // it (sandbox_plan::from_recorded_facts) and every launcher refuses it
  // (plan_recorded_facts); explain and probe use it freely.
  bool recorded = false;

  // Gate 2: can the backend run here at all, and if not, why.
  bool backend_available = false;
  std::string backend_blocker;
  // A backend of weaker isolation chosen because a stronger one cannot run
  // here (Linux: linux-os-sandbox when linux-namespaces cannot): why not, and
  // what would change that. Gate 3 names it when a policy needs the stronger
  // isolation. Empty otherwise.
  std::string stronger_backend_blocker;

  // The facts only one backend reads, as that backend's own type, which the
  // driver carries without looking inside: the Linux backends'
  // `linux_host_facts` (cordon/linux_host_facts.h), the macOS backend's
  // `macos_impl::macos_host_facts` (src/macos/host_facts.h), the Windows
  // backend's `windows::windows_backend_facts` (cordon/windows/compile.h).
  // read_host_facts() and load_host_facts() (cordon/backend.h) fill it; a
  // backend whose record is missing or of another type refuses the build
  // (backend_unavailable). Read it with backend_facts_as<T>().
  std::any backend_facts;

  // The facts above as one line each ("landlock abi 7"), for probe output.
  std::vector<std::string> lines;
};

// The backend's own record in `facts` when it is a T; nullptr otherwise (no
// record, or another backend's).
template <class T>
const T* backend_facts_as(const host_facts& facts) noexcept {
  return std::any_cast<T>(&facts.backend_facts);
}
template <class T>
T* backend_facts_as(host_facts& facts) noexcept {
  return std::any_cast<T>(&facts.backend_facts);
}

}  // namespace cordon
