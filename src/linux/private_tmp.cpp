#include "linux/private_tmp.h"

#include <algorithm>
#include <set>

#include "linux/paths.h"

namespace cordon::linux_impl {
namespace {

constexpr const char* kVarTmp = "/var/tmp";

bool is_mount(const mount_op& op) {
  return op.kind == mount_kind::bind_read_only || op.kind == mount_kind::bind_writable ||
         op.kind == mount_kind::mask || op.kind == mount_kind::private_tmpfs;
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

void complete_private_tmp(mount_table& table, std::vector<std::string>& notes) {
  if (!table.private_tmp) return;
  auto tmp = std::find_if(table.ops.begin(), table.ops.end(),
                          [](const mount_op& op) { return op.kind == mount_kind::private_tmpfs && op.path == "/tmp"; });
  if (tmp == table.ops.end()) return;
  // Under a full read the host's /var/tmp stays visible (read-only) as it was:
  // the table's masks and skipped readable entries beneath it assume so.
  const bool var_tmp = !table.full_root;
  if (var_tmp) table.ops.insert(tmp + 1, {mount_kind::private_tmpfs, kVarTmp, {}, true, "{run_tmp}"});

  std::vector<std::string> tmp_roots{"/tmp"};
  if (var_tmp) tmp_roots.emplace_back(kVarTmp);
  std::set<std::string> mounted, sealed;
  for (const auto& op : table.ops) {
    if (is_mount(op)) mounted.insert(op.path);
  }
  std::vector<mount_op> seals;
  for (const auto& op : table.ops) {
    if (!is_mount(op) || op.kind == mount_kind::private_tmpfs) continue;
    for (const auto& root : tmp_roots) {
      if (op.path == root || !path_is_within(op.path, root)) continue;
      const std::string parent = parent_of(op.path);
      if (parent == root) {
        if (op.why == "readable" || op.why == "writable") {
          notes.push_back(op.why + " root " + op.path + " lies directly in " + root + ", which is private to the run: " +
                          "what the command writes beside it (" + root + "/<name>) is discarded when the run ends; "
                          "use a workspace one level deeper (" + root + "/<dir>/<workspace>) to have such writes fail");
        }
        continue;
      }
      const std::string top = op.path.substr(0, op.path.find('/', root.size() + 1));
      if (mounted.count(top) == 0 && sealed.insert(top).second) {
        seals.push_back({mount_kind::seal_read_only, top, {}, true, "leads to a mounted root"});
      }
    }
  }
  table.ops.insert(table.ops.end(), seals.begin(), seals.end());
}

}  // namespace cordon::linux_impl
