// table.h — the aligned tables of `cordon policy explain`, `cordon probe
// --human` and `cordon report show`.
#pragma once

#include <iostream>
#include <string>
#include <vector>

namespace cordon::cli {

// Rows of fixed columns and a free last column; a row's `notes` go on
// continuation lines under the last column.
struct table_row {
  std::vector<std::string> cells;
  std::vector<std::string> notes;
};

// Prints `header` and `rows` to `out`, each column as wide as its widest
// cell plus two spaces, trailing spaces trimmed.
void print_table(const std::vector<std::string>& header, const std::vector<table_row>& rows,
                 std::ostream& out = std::cout);

}  // namespace cordon::cli
