// tools.h — the tools `cordon mcp` serves (server.h): their schemas for
// tools/list and their calls, each through the governance runtime.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cordon/backend.h"
#include "cordon/fs_worker.h"
#include "cordon/governance/runtime.h"
#include "cordon/prepared.h"
#include "mcp/server.h"

namespace cordon::mcp {

using json = nlohmann::ordered_json;

// The tools/list result's "tools".
json tool_list();

// What a tool call needs: the runtime, its context, the pool, the worker.
class toolbox {
 public:
  // Compiles the policy for the workspace, starts the pool and the file
  // worker. Errors: the compile's, the worker's start.
  static result<std::unique_ptr<toolbox>> open(const server_options& options, governance::execution_runtime& runtime,
                                               governance::audit_sink& audit);
  // A tools/call result ({"content", "structuredContent", "isError"}), or
  // nullopt for a tool that does not exist.
  std::optional<json> call(const std::string& name, const json& arguments);

 private:
  toolbox(const server_options& options, governance::execution_runtime& runtime, governance::audit_sink& audit)
      : options_(options), runtime_(runtime), audit_(audit) {}
  json shell(const json& arguments);
  json file_tool(const std::string& name, const json& arguments);

  const server_options& options_;
  governance::execution_runtime& runtime_;
  governance::audit_sink& audit_;
  governance::execution_context context_;
  std::shared_ptr<sandbox_backend> backend_;
  std::unique_ptr<prepared_pool> pool_;
  std::optional<fs_worker> worker_;
};

}  // namespace cordon::mcp
