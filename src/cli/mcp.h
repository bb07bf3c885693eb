// mcp.h — `cordon mcp` (mcp.cpp): the tool-use call as an MCP server on
// stdin/stdout (docs/mcp.md).
#pragma once

#include <CLI/CLI.hpp>

namespace cordon::cli {

// Adds `cordon mcp`; its callback stores the exit status in `*result`.
void add_mcp_command(CLI::App& app, int* result);

}  // namespace cordon::cli
