// facts_record.cpp — the Linux backends' recorded host facts
// (linux/host_facts.h; the format is docs/host-facts.md).
#include <limits>

#include "core/facts_record.h"
#include "linux/host_facts.h"

namespace cordon::linux_impl {

error no_linux_facts() {
  error e = make_error(error_code::backend_unavailable, "the host facts carry no Linux record");
  e.blockers.push_back(blocker::for_backend("no Linux host facts"));
  return e;
}

result<host_facts> load_linux_host_facts(std::string_view record) {
  auto opened = core::facts_reader::open(record, "linux");
  if (!opened) return std::move(opened).error_value();
  core::facts_reader& r = *opened;
  std::uint64_t uid = 0, gid = 0, abi = 0;
  std::string home;
  linux_host_facts lx;
  r.integer("uid", std::numeric_limits<unsigned>::max(), uid);
  r.integer("gid", std::numeric_limits<unsigned>::max(), gid);
  r.string("home", home);
  r.boolean("user_namespaces", lx.user_namespaces);
  r.string("user_namespace_blocker", lx.user_namespace_blocker);
  r.integer("landlock_abi", 1000, abi);
  r.string("landlock_blocker", lx.landlock_blocker);
  r.boolean("seccomp", lx.seccomp);
  r.boolean("nested_user_namespace", lx.nested_user_namespace);
  r.boolean("seccomp_filtered", lx.seccomp_filtered);
  r.object("cgroups", [&](core::facts_reader& c) {
    c.boolean("v2", lx.cgroups.v2);
    c.string("memory_parent", lx.cgroups.memory_parent);
    c.string("pids_parent", lx.cgroups.pids_parent);
    c.string("cpu_parent", lx.cgroups.cpu_parent);
    c.string("blocker", lx.cgroups.blocker);
    c.string("enter_leaf_of", lx.cgroups.enter_leaf_of);
  });
  if (auto done = r.finish(); !done) return std::move(done).error_value();
  lx.landlock_abi = static_cast<int>(abi);
  host_facts facts =
      linux_driver_facts(std::move(lx), static_cast<unsigned>(uid), static_cast<unsigned>(gid), std::move(home));
  facts.recorded = true;  // a description of a host: its plans never launch
  return facts;
}

result<std::string> record_linux_host_facts(const host_facts& facts) {
  const linux_host_facts* lx = linux_facts_of(facts);
  if (lx == nullptr) {
    return make_error(error_code::unsupported_platform, "the host facts carry no Linux record");
  }
  nlohmann::ordered_json j = core::facts_record("linux");
  j["uid"] = facts.uid;
  j["gid"] = facts.gid;
  j["home"] = facts.home;
  j["user_namespaces"] = lx->user_namespaces;
  j["user_namespace_blocker"] = lx->user_namespace_blocker;
  j["landlock_abi"] = lx->landlock_abi;
  j["landlock_blocker"] = lx->landlock_blocker;
  j["seccomp"] = lx->seccomp;
  j["nested_user_namespace"] = lx->nested_user_namespace;
  j["seccomp_filtered"] = lx->seccomp_filtered;
  j["cgroups"] = {{"v2", lx->cgroups.v2},
                  {"memory_parent", lx->cgroups.memory_parent},
                  {"pids_parent", lx->cgroups.pids_parent},
                  {"cpu_parent", lx->cgroups.cpu_parent},
                  {"blocker", lx->cgroups.blocker},
                  {"enter_leaf_of", lx->cgroups.enter_leaf_of}};
  return j.dump(2) + "\n";
}

}  // namespace cordon::linux_impl
