// patch.h — the two patch formats apply_patch takes (docs/fs-worker.md,
// "apply_patch"): a unified diff (`--- a/x`, `+++ b/x`, `@@ -l,n +l,n @@`)
// and the agent format (`*** Begin Patch` ... `*** End Patch` with Add File,
// Update File [+ Move to], Delete File). Parsing and applying are pure
// functions of text; the worker commits the results all-or-nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fsworker/fs_error.h"

namespace cordon::fsworker {

struct patch_hunk {
  std::string header;                 // agent format: the "@@ text" line to find first; "" for none
  long old_start = -1;                // unified: the 1-based line the hunk starts at; -1 unknown
  std::vector<std::string> old_lines; // context and removed lines, in order
  std::vector<std::string> new_lines; // context and added lines, in order
  bool end_of_file = false;           // agent "*** End of File": the hunk ends at the file's end
  bool new_no_newline = false;        // unified "\ No newline at end of file" after an added line
};

struct patch_file {
  enum class kind { add, update, remove } what = kind::update;
  std::string path;
  std::string move_to;  // update with a rename ("" for none)
  std::vector<patch_hunk> hunks;
  std::string content;  // add: the new file's content
};

// Parses either format (the agent format when the first non-empty line is
// "*** Begin Patch"). Errors: patch_invalid with the line number.
fs_result<std::vector<patch_file>> parse_patch(std::string_view text);

// Applies the hunks of one file to its content. Errors: patch_conflict
// naming the hunk (1-based) whose lines were not found.
fs_result<std::string> apply_hunks(const std::string& original, const std::vector<patch_hunk>& hunks,
                                   const std::string& path);

// A unified diff of one file (one hunk over the changed region, three lines
// of context); "" when nothing changed. `a`/`b` empty names /dev/null.
std::string unified_diff(const std::string& name_a, const std::string& a, const std::string& name_b,
                         const std::string& b, bool a_exists, bool b_exists);

}  // namespace cordon::fsworker
