// os_sandbox_facts.cpp — gate 2 of the os_sandbox backend, and the advice
// that goes with it (os_sandbox_facts.h; docs/linux-backend.md, "Without
// namespaces").
#include "linux/os_sandbox_facts.h"

#include "cordon/linux_backend.h"

namespace cordon::linux_impl {

std::string user_namespace_remedy(const std::string& blocker) {
  auto has = [&](const char* text) { return blocker.find(text) != std::string::npos; };
  if (has("max_user_namespaces")) {
    return has("nested") ? "run cordon outside the enclosing sandbox, or start that sandbox with user namespaces "
                           "allowed (bubblewrap without --disable-userns)"
                         : "an administrator can set the sysctl user.max_user_namespaces above 0";
  }
  if (has("unprivileged_userns_clone")) return "an administrator can set the sysctl kernel.unprivileged_userns_clone=1";
  if (has("AppArmor")) {
    return "load the AppArmor profile the cordon package installs (apparmor_parser -r /etc/apparmor.d/cordon; "
           "docs/packaging.md), or set the sysctl kernel.apparmor_restrict_unprivileged_userns=0";
  }
  if (has("seccomp filter")) {
    return "run the container with a seccomp profile that allows unshare and clone with namespace flags "
           "(docker run --security-opt seccomp=<profile>, a Kubernetes seccompProfile), or outside it";
  }
  if (has("security module or an enclosing sandbox")) {
    return "find the security module or sandbox that refuses unshare(CLONE_NEWUSER) and allow it for cordon";
  }
  return "";
}

host_facts os_sandbox_facts(host_facts facts) {
  if (!facts.backend_available) {
    std::string remedy = user_namespace_remedy(facts.backend_blocker);
    facts.stronger_backend_blocker = std::string(linux_backend_name) + " cannot run here: " + facts.backend_blocker +
                                     (remedy.empty() ? "" : " (" + remedy + ")");
    facts.lines.push_back(facts.stronger_backend_blocker);
  }
  const linux_host_facts* linux_facts = linux_facts_of(facts);
  facts.backend_available = linux_facts != nullptr && linux_facts->landlock_abi > 0 && linux_facts->seccomp;
  facts.backend_blocker.clear();
  if (linux_facts == nullptr) {
    facts.backend_blocker = "the host facts carry no Linux record";
  } else if (linux_facts->landlock_abi == 0) {
    facts.backend_blocker = "the os_sandbox backend needs Landlock for the filesystem: " + linux_facts->landlock_blocker;
  } else if (!linux_facts->seccomp) {
    facts.backend_blocker = "the os_sandbox backend needs seccomp filters, which this kernel lacks";
  }
  return facts;
}

}  // namespace cordon::linux_impl
