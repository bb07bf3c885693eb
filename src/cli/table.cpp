// The aligned tables: see table.h.
#include "cli/table.h"

#include <algorithm>

namespace cordon::cli {

void print_table(const std::vector<std::string>& header, const std::vector<table_row>& rows, std::ostream& out) {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows) {
    for (std::size_t i = 0; i + 1 < row.cells.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row.cells[i].size());
    }
  }
  std::size_t indent = 0;
  for (std::size_t i = 0; i + 1 < width.size(); ++i) indent += width[i] + 2;
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      line += cells[i];
      if (i + 1 < cells.size() && i < width.size()) line += std::string(width[i] + 2 - cells[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(header);
  for (const auto& row : rows) {
    print_row(row.cells);
    for (const auto& note : row.notes) out << std::string(indent, ' ') << note << "\n";
  }
}

}  // namespace cordon::cli
