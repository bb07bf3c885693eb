// git's rules as cordon reads them (src/core/git_rules.cpp): the config
// syntax of git-config(1), includes, the executable keys, and gitlinks in
// indexes that the real git wrote.
#include "core/git_rules.h"
#include "core/git_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cordon::core {
namespace {

namespace fs = std::filesystem;

std::vector<git_config_entry> parse(std::string_view text) {
  auto entries = parse_git_config(text, "f");
  EXPECT_TRUE(entries.has_value()) << text;
  return entries.value_or(std::vector<git_config_entry>{});
}

TEST(GitConfigSyntax, SectionsSubsectionsAndValues) {
  auto e = parse(
      "# comment\n[Core]\n\tFSMonitor = \"touch /x\" ; comment\n[diff \"My\\\"Drv\"]\n textconv = a\\\n b\n"
      "[filter.LFS]\nclean = c # x\n[alias] st = !git status\n[core]bare\n");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].key(), "core.fsmonitor");
  EXPECT_EQ(e[0].value, "touch /x");
  EXPECT_EQ(e[1].section, "diff");
  EXPECT_EQ(e[1].subsection, "My\"Drv");  // subsections keep their case
  EXPECT_EQ(e[1].value, "a b");           // a continued line
  EXPECT_EQ(e[2].key(), "filter.lfs.clean");  // the old form is lowercased
  EXPECT_EQ(e[2].value, "c");
  EXPECT_EQ(e[3].key(), "alias.st");  // a variable on the header's line
  EXPECT_EQ(e[3].value, "!git status");
  EXPECT_EQ(e[4].name, "bare");
  EXPECT_EQ(e[4].value, "");
}

TEST(GitConfigSyntax, QuotesKeepCommentCharactersAndEscapes) {
  auto e = parse("[core]\n  pager = \"less # not a comment\"\\tx  \n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].value, "less # not a comment\tx");
}

TEST(GitConfigSyntax, TextGitRejectsIsNotGuessed) {
  for (const char* bad : {"[core\nx = 1\n", "[core]\nx = \"open\n", "[core]\nx = \\q\n", "[core]\n1x = 2\n",
                          "x = 1\n", "[core \"a]\n"}) {
    EXPECT_FALSE(parse_git_config(bad, "f").has_value()) << bad;
  }
}

TEST(GitConfigKeys, TheKeysGitRunsOrFollows) {
  auto runs = [](const char* text) {
    auto e = parse_git_config(text, "f");
    return e && e->size() == 1 && git_key_runs_code(e->front());
  };
  for (const char* yes :
       {"[core]\nfsmonitor = x\n", "[core]\nhooksPath = h\n", "[core]\nsshCommand = s\n", "[core]\npager = p\n",
        "[core]\neditor = e\n", "[core]\naskPass = a\n", "[sequence]\neditor = e\n", "[diff]\nexternal = x\n",
        "[diff \"x\"]\ntextconv = t\n", "[diff \"x\"]\ncommand = c\n", "[filter \"x\"]\nclean = c\n",
        "[filter \"x\"]\nsmudge = s\n", "[filter \"x\"]\nprocess = p\n", "[merge \"x\"]\ndriver = d\n",
        "[credential]\nhelper = h\n", "[credential \"https://x\"]\nhelper = h\n", "[gpg]\nprogram = g\n",
        "[gpg \"ssh\"]\nprogram = g\n", "[uploadpack]\npackObjectsHook = p\n", "[alias]\nx = !sh\n",
        "[include]\npath = p\n", "[includeIf \"gitdir:/x/\"]\npath = p\n", "[pager]\nlog = l\n",
        "[web]\nbrowser = b\n", "[browser \"x\"]\ncmd = c\n", "[instaweb]\nhttpd = h\n",
        "[submodule \"s\"]\nupdate = !sh\n", "[remote \"o\"]\nuploadpack = u\n", "[sendemail]\ntocmd = t\n",
        "[extensions]\nworktreeConfig = true\n", "[core]\nworktree = /w\n"}) {
    EXPECT_TRUE(runs(yes)) << yes;
  }
  for (const char* no : {"[core]\nbare = false\n", "[user]\nname = n\n", "[alias]\nst = status\n",
                         "[submodule \"s\"]\nupdate = rebase\n", "[diff]\ntextconv = t\n", "[remote \"o\"]\nurl = u\n",
                         "[include \"x\"]\npath = p\n", "[core \"x\"]\nfsmonitor = f\n"}) {
    EXPECT_FALSE(runs(no)) << no;
  }
}

struct scratch {
  std::string dir;
  scratch() {
    char tmpl[] = "/tmp/cordon-gitrules-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~scratch() { fs::remove_all(dir); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(dir + "/" + rel).parent_path());
    std::ofstream(dir + "/" + rel) << text;
  }
};

TEST(GitConfigTree, FollowsIncludesWhateverTheCondition) {
  scratch s;
  s.write("repo/config", "[include]\npath = extra\n[includeIf \"onbranch:never\"]\npath = ~/home.inc\n"
                         "[includeIf \"gitdir:/nowhere/\"]\npath = /absent/file\n");
  s.write("repo/extra", "[core]\nfsmonitor = run-me\n[include]\npath = sub/deeper\n");
  s.write("repo/sub/deeper", "[filter \"x\"]\nclean = c\n");
  s.write("home/home.inc", "[core]\npager = p\n");
  auto tree = read_git_config_tree(s.dir + "/repo/config", s.dir + "/home");
  EXPECT_TRUE(tree.unreadable.empty());
  ASSERT_EQ(tree.files.size(), 5u);
  EXPECT_EQ(tree.files[1], s.dir + "/repo/extra");
  EXPECT_EQ(tree.files[2], s.dir + "/repo/sub/deeper");  // relative to the including file
  EXPECT_EQ(tree.files[3], s.dir + "/home/home.inc");
  EXPECT_EQ(tree.files[4], "/absent/file");  // named, absent: git reads it once it exists
  std::vector<std::string> keys;
  for (const auto& e : tree.entries) {
    if (git_key_runs_code(e)) keys.push_back(e.key());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"include.path", "core.fsmonitor", "include.path", "filter.x.clean",
                                            "includeif.onbranch:never.path", "core.pager",
                                            "includeif.gitdir:/nowhere/.path"}));
}

TEST(GitConfigTree, AnIncludeChainStopsAtTenLevelsAndSaysSo) {
  scratch s;
  for (int i = 0; i < 12; ++i) s.write("f" + std::to_string(i), "[include]\npath = f" + std::to_string(i + 1) + "\n");
  auto tree = read_git_config_tree(s.dir + "/f0", "");
  EXPECT_EQ(tree.files.size(), 11u);
  ASSERT_EQ(tree.unreadable.size(), 1u);
  EXPECT_NE(tree.unreadable[0].find(s.dir + "/f11 (included more than 10 levels"), std::string::npos)
      << tree.unreadable[0];
}

// A config that includes itself three times: on main 3^10 reads. Now an
// include cycle is an error at once (git stops at depth 10 with an error),
// named by the file it closes on, and the file is read once.
TEST(GitConfigTree, AnIncludeCycleIsAnErrorAtOnce) {
  scratch s;
  s.write("a", "[include]\npath = b\n");
  s.write("b", "[include]\npath = a\npath = a\npath = ./a\n");
  auto tree = read_git_config_tree(s.dir + "/a", "");
  ASSERT_FALSE(tree.unreadable.empty());
  EXPECT_NE(tree.unreadable[0].find(s.dir + "/a (include cycle"), std::string::npos) << tree.unreadable[0];
  EXPECT_LE(tree.files.size(), 5u);
}

// A diamond (two includes of one file) is no cycle: read once, no error.
TEST(GitConfigTree, AFileIncludedTwiceIsReadOnce) {
  scratch s;
  s.write("a", "[include]\npath = c\npath = b\n");
  s.write("b", "[include]\npath = c\n");
  s.write("c", "[core]\npager = x\n");
  auto tree = read_git_config_tree(s.dir + "/a", "");
  EXPECT_TRUE(tree.unreadable.empty());
  int pagers = 0;
  for (const auto& e : tree.entries) pagers += e.key() == "core.pager";
  EXPECT_EQ(pagers, 1);
}

// A sparse file far above the size cap is refused by its size, unread; a
// file of more variables than the cap likewise.
TEST(GitConfigTree, GiantConfigsAreRefusedUnread) {
  scratch s;
  {
    std::ofstream(s.dir + "/big");
  }
  ASSERT_EQ(::truncate((s.dir + "/big").c_str(), std::int64_t{8} << 30), 0);
  s.write("a", "[include]\npath = big\n");
  auto tree = read_git_config_tree(s.dir + "/a", "");
  ASSERT_EQ(tree.unreadable.size(), 1u);
  EXPECT_NE(tree.unreadable[0].find(s.dir + "/big (larger than"), std::string::npos) << tree.unreadable[0];
  std::string many = "[a]\n";
  for (std::size_t i = 0; i <= max_config_variables; ++i) many += "b\n";
  s.write("many", many);
  tree = read_git_config_tree(s.dir + "/many", "");
  ASSERT_EQ(tree.unreadable.size(), 1u);
  EXPECT_NE(tree.unreadable[0].find("more than"), std::string::npos) << tree.unreadable[0];
}

TEST(GitConfigTree, AConfigGitWouldRejectIsUnreadable) {
  scratch s;
  s.write("c", "[core\n");
  auto tree = read_git_config_tree(s.dir + "/c", "");
  EXPECT_EQ(tree.unreadable, std::vector<std::string>{s.dir + "/c (not a config git reads)"});
}

// GIT_CONFIG_PARAMETERS as git writes it for `git -c`: both item forms,
// a quote inside, and text git would reject.
TEST(GitConfigSources, ConfigParametersAsGitQuotesThem) {
  auto p = parse_config_parameters("'core.pager'='less -R' 'alias.x=!echo it'\\''s' 'core.bare'");
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (std::vector<std::pair<std::string, std::string>>{
                    {"core.pager", "less -R"}, {"alias.x", "!echo it's"}, {"core.bare", ""}}));
  EXPECT_FALSE(parse_config_parameters("'core.pager=less"));
  EXPECT_FALSE(parse_config_parameters("core.pager=less"));
  auto e = config_entry_from_key("Filter.My.Filter.Clean", "x", "ENV");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->section, "filter");
  EXPECT_EQ(e->subsection, "My.Filter");
  EXPECT_EQ(e->name, "clean");
  EXPECT_FALSE(config_entry_from_key("nodot", "", "ENV"));
}

// Every source git reads for the host user, each with its includes: the
// global file, the XDG one, GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT/KEY/VALUE and
// GIT_CONFIG_PARAMETERS; and the paths their variables name.
TEST(GitConfigSources, EverySourceGitReadsForTheHostUser) {
  scratch s;
  s.write("home/.gitconfig", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ~/more.cfg\n");
  s.write("home/more.cfg", "[core]\n\tpager = ~/bin/pager\n");
  s.write("xdg/git/config", "[core]\n\tfsmonitor = ./tools/monitor.sh\n");
  s.write("global.cfg", "[diff \"x\"]\n\ttextconv = /opt/textconv\n");
  const std::string home = s.dir + "/home";
  auto tree = read_host_git_config(
      home, {"XDG_CONFIG_HOME=" + s.dir + "/xdg", "GIT_CONFIG_GLOBAL=" + s.dir + "/global.cfg", "GIT_CONFIG_COUNT=1",
             "GIT_CONFIG_KEY_0=core.sshCommand", "GIT_CONFIG_VALUE_0=./ssh.sh -v",
             "GIT_CONFIG_PARAMETERS='alias.go'='!scripts/go.sh'"});
  EXPECT_TRUE(tree.unreadable.empty()) << tree.unreadable.front();
  std::vector<std::string> paths;
  for (const auto& e : tree.entries) {
    for (const auto& p : git_entry_paths(e, "/w", home)) paths.push_back(e.key() + " " + p);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"core.hookspath /w/.githooks", "core.pager " + home + "/bin/pager",
                                             "core.fsmonitor /w/tools/monitor.sh", "diff.x.textconv /opt/textconv",
                                             "core.sshcommand /w/ssh.sh", "alias.go /w/scripts/go.sh"}));
  auto bad = read_host_git_config(home, {"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"});
  ASSERT_EQ(bad.unreadable.size(), 1u);
  EXPECT_NE(bad.unreadable[0].find("GIT_CONFIG_KEY_1"), std::string::npos);
  // A program found on PATH names no path; neither does a plain value.
  EXPECT_TRUE(git_entry_paths(*config_entry_from_key("core.pager", "less", "E"), "/w", home).empty());
  EXPECT_TRUE(git_entry_paths(*config_entry_from_key("user.name", "a/b", "E"), "/w", home).empty());
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

int sh(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

// Indexes written by the real git, versions 2, 3 (an intent-to-add entry sets
// the extended flag) and 4 (compressed names), each with two gitlinks.
TEST(GitIndex, GitlinksInEveryIndexVersion) {
  if (sh("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  for (int version : {2, 3, 4}) {
    scratch s;
    const std::string r = s.dir + "/top";
    const std::string git = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=m -C " + r + " ";
    ASSERT_EQ(sh("git init -q " + r), 0);
    for (const char* sub : {"aa/nested", "zz/other"}) {
      ASSERT_EQ(sh("git init -q " + r + "/" + sub), 0);
      ASSERT_EQ(sh(git + "-C " + sub + " commit -q --allow-empty -m x"), 0);
    }
    s.write("top/aa/file", "x");
    s.write("top/aa/newer", "y");
    ASSERT_EQ(sh(git + "add aa/file aa/nested zz/other"), 0);
    ASSERT_EQ(sh(git + "add -N aa/newer"), 0);
    ASSERT_EQ(sh(git + "update-index --index-version " + std::to_string(version)), 0);
    auto links = gitlinks_in_index(slurp(r + "/.git/index"));
    ASSERT_TRUE(links.has_value()) << "version " << version;
    EXPECT_EQ(*links, (std::vector<std::string>{"aa/nested", "zz/other"})) << "version " << version;
  }
}

TEST(GitIndex, BytesThatAreNoIndexAreRefused) {
  EXPECT_FALSE(gitlinks_in_index("").has_value());
  EXPECT_FALSE(gitlinks_in_index(std::string("DIRC\0\0\0\x05\0\0\0\0", 12)).has_value());
  std::string one_entry_missing("DIRC\0\0\0\x02\0\0\0\x01", 12);
  EXPECT_FALSE(gitlinks_in_index(one_entry_missing).has_value());
  std::string empty("DIRC\0\0\0\x02\0\0\0\0", 12);
  ASSERT_TRUE(gitlinks_in_index(empty).has_value());
  EXPECT_TRUE(gitlinks_in_index(empty)->empty());
}

}  // namespace
}  // namespace cordon::core
