// src/core/columns.h — rows of cells as lines with padded columns, for the
// backends' plan explanations (plan_payload::explain, cordon/plan.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace cordon::core {

// Each row as one line: every cell but the last padded to its column's
// widest cell plus two spaces; the last cell free.
inline std::vector<std::string> format_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      if (width.size() <= i) width.resize(i + 1, 0);
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] + 2 - row[i].size(), ' ');
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace cordon::core
