// git_rules.h — git's own rules for what it executes or trusts, as cordon
// needs them to protect a workspace (docs/deferred-execution.md): the
// configuration files git reads (with include.path and includeIf.*.path
// followed), the configuration keys whose values git runs as commands or
// follows to other files, and the gitlinks of an index.
//
// Sources: git-config(1) ("CONFIGURATION FILE": syntax, includes,
// conditional includes, "Variables"), gitrepository-layout(5), githooks(5),
// gitformat-index(5) ("Index entry": mode 160000 is a gitlink).
//
// Pure functions over text and bytes, apart from read_git_config_tree(),
// which reads the files it is given: nothing here decides a mount.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::core {

// One variable as git reads it. `section` and `name` are lowercased (git
// compares them without case); `subsection` keeps its case (git compares it
// exactly) and is empty when the header had none.
struct git_config_entry {
  std::string file;  // the file it was read from (an include's own path for included lines)
  std::string section;
  std::string subsection;
  std::string name;
  std::string value;  // escapes decoded, quotes removed, comments stripped; "" for a bare `name` (true)
  // "section.subsection.name" or "section.name": the key as git-config(1) spells it.
  std::string key() const;
};

// Parses one configuration file's text as git does: `[section]`,
// `[section "subsection"]` (with \" and \\), the old `[section.subsection]`
// (lowercased), `name = value` and a bare `name`, values with double quotes,
// escapes (\n \t \b \" \\), `#` and `;` comments outside quotes, and a
// backslash at the end of a line continuing the value. `file` only labels the
// entries. Returns nullopt on text git itself rejects (an unterminated header
// or quote, a bad escape, a line that is not a variable): a reader that
// cannot tell what git would read must not guess.
// More than `max_variables` variables is refused the same way (nullopt):
// the caller's memory stays bounded whatever the text holds.
std::optional<std::vector<git_config_entry>> parse_git_config(std::string_view text, const std::string& file,
                                                              std::size_t max_variables = SIZE_MAX);

// The bounds of read_git_config_tree(), so that a config the command wrote
// cannot exhaust the process that reads it (docs/deferred-execution.md,
// "The bound"). Past any of them the file is in `unreadable`, never read in part.
inline constexpr std::size_t max_config_bytes = 1 << 20;       // per file (git has no limit; real ones are < 64 KiB)
inline constexpr std::size_t max_config_variables = 10000;     // per file, and per tree
inline constexpr std::size_t max_config_files = 64;            // distinct files per tree
inline constexpr int max_include_depth = 10;                   // git's own (config.c, MAX_INCLUDE_DEPTH)

// Every file git could read starting from `file`, and every variable in
// them, in order. include.path and includeIf.<condition>.path are followed
// whatever the condition (gitdir:, onbranch:, hasconfig:): a superset of what
// git reads on any branch, in any directory. Relative include paths are
// relative to the including file's directory, `~/` is `home`, as git-config(1)
// says. Errors, as git's are: an include more than 10 levels deep, and an
// include cycle (a file including itself, directly or not: git fails at
// depth 10, cordon at once). Each file is read once (a file included twice
// from different places adds nothing new), at most max_config_bytes, and a
// tree reads at most max_config_files files and keeps max_config_variables
// variables. `files` lists the start file and each include path named
// (existing or not: a missing include is read by git once it exists);
// `unreadable` each file that exists but could not be read or parsed, or
// broke a bound, as "<path> (<why>)" (the caller must fail closed on them);
// `bytes` what was read.
struct git_config_tree {
  std::vector<git_config_entry> entries;
  std::vector<std::string> files;
  std::vector<std::string> unreadable;
  std::size_t bytes = 0;
};
git_config_tree read_git_config_tree(const std::string& file, const std::string& home);

// Does git run the value of this variable as a command, or follow it to
// code or configuration elsewhere? The table is git-config(1)'s: core.fsmonitor,
// core.hooksPath, core.sshCommand, core.pager, core.editor, core.askPass,
// core.gitProxy, core.alternateRefsCommand, core.worktree, sequence.editor,
// diff.external, diff.*.textconv, diff.*.command, difftool.*.cmd/path,
// mergetool.*.cmd/path, merge.*.driver, filter.*.clean/smudge/process,
// credential.helper, credential.*.helper, gpg.program, gpg.*.program,
// gpg.ssh.defaultKeyCommand, uploadpack.packObjectsHook, alias.* starting with
// '!', submodule.*.update starting with '!', include.path,
// includeIf.*.path, pager.*, browser.*.cmd/path, web.browser,
// instaweb.httpd, man.*.cmd/path, sendemail.*cmd, sendemail.smtpServer,
// remote.*.uploadpack/receivepack/vcs, trailer.*.command/cmd,
// tar.*.command, interactive.diffFilter, extensions.worktreeConfig.
bool git_key_runs_code(const git_config_entry& entry);

// The paths (as recorded, relative to the work tree) of every gitlink
// (mode 160000) in an index file's bytes, versions 2, 3 and 4.
// `hash_bytes` is the object id size: 20 (SHA-1), or 32 in a repository with
// extensions.objectFormat = sha256. nullopt when the bytes are not an index
// git would read (bad signature, version, or an entry running past the end).
std::optional<std::vector<std::string>> gitlinks_in_index(std::string_view bytes, std::size_t hash_bytes = 20);

}  // namespace cordon::core
