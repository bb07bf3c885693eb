// The shell splitter, by table: each command line, and either the simple
// commands it holds (words joined by one space, segments by " ; ") or "?"
// for a line it must not claim to understand.
#include <gtest/gtest.h>

#include "cordon/governance/shell_split.h"

namespace cordon::governance {
namespace {

std::string render(const shell_split& s) {
  if (!s.certain()) return "?";
  std::string out;
  for (const auto& seg : s.segments) {
    if (!out.empty()) out += " ; ";
    std::string words;
    for (const auto& w : seg.words) words += (words.empty() ? "" : " ") + w.text;
    out += words;
  }
  return out;
}

struct row {
  const char* command;
  const char* expected;
};

const row kTable[] = {
    // Plain commands and separators.
    {"ls", "ls"},
    {"ls -la /tmp", "ls -la /tmp"},
    {"  ls   -l  ", "ls -l"},
    {"git status && git diff", "git status ; git diff"},
    {"make || echo failed", "make ; echo failed"},
    {"a; b; c", "a ; b ; c"},
    {"a;b", "a ; b"},
    {"a | b | c", "a ; b ; c"},
    {"a |& b", "a ; b"},
    {"sleep 1 & wait", "sleep 1 ; wait"},
    {"a\nb", "a ; b"},
    {"a &&\nb", "a ; b"},
    {"a \\\n  b", "a b"},
    {"! grep -q x f", "grep -q x f"},
    {"cat f | grep x | sort | uniq -c | sort -n", "cat f ; grep x ; sort ; uniq -c ; sort -n"},
    {"", ""},
    {";", ""},
    {"# just a comment", ""},
    {"ls # comment; rm -rf /", "ls"},
    {"echo a#b", "echo a#b"},
    // Quoting.
    {"echo 'a b'", "echo a b"},
    {"echo \"a b\"", "echo a b"},
    {"echo 'it''s'", "echo its"},
    {"echo \"x;y\"", "echo x;y"},
    {"echo 'a && b'", "echo a && b"},
    {"echo a\\ b", "echo a b"},
    {"echo \\;", "echo ;"},
    {"echo \"a\\\"b\"", "echo a\"b"},
    {"echo \"\\$HOME\"", "echo $HOME"},
    {"echo '$(rm -rf /)'", "echo $(rm -rf /)"},
    {"echo '`id`'", "echo `id`"},
    {"grep -e 'a|b' file", "grep -e a|b file"},
    {"printf '%s\\n' x", "printf %s\\n x"},
    {"'git' status", "git status"},
    {"g\"i\"t status", "git status"},
    {"echo 'unclosed", "?"},
    {"echo \"unclosed", "?"},
    // Subshells and groups.
    {"(cd src && make)", "cd src ; make"},
    {"(a; (b | c)) && d", "a ; b ; c ; d"},
    {"{ a; b; }", "a ; b"},
    {"(a", "?"},
    {"a)", "?"},
    {"f() { rm -rf /; }", "?"},
    // Redirections.
    {"echo hi > out.txt", "echo hi"},
    {"echo hi >> /tmp/log", "echo hi"},
    {"make 2>&1 | tee log", "make ; tee log"},
    {"make > /dev/null 2>&1", "make"},
    {"cmd &> all.log", "cmd"},
    {"sort < in > out", "sort"},
    {"cmd 2> err", "cmd"},
    {"cmd >| forced", "cmd"},
    {"echo >", "?"},
    {"cat <<< 'here string'", "cat"},
    {"cmd <> file", "?"},
    {"> file", ""},
    // Here-documents.
    {"cat <<'EOF'\n$(rm -rf /)\nEOF", "cat"},
    {"cat <<\"EOF\"\n`id`\nEOF", "cat"},
    {"cat <<EOF\nplain text\nEOF", "cat"},
    {"cat <<EOF\n$HOME\nEOF", "?"},
    {"cat <<EOF\n$(id)\nEOF", "?"},
    {"cat <<-EOF\n\tplain\n\tEOF\necho after", "cat ; echo after"},
    {"cat <<EOF\nnever ends", "?"},
    {"cat <<EOF", "?"},
    // Expansions.
    {"echo $(whoami)", "?"},
    {"echo `whoami`", "?"},
    {"echo \"$(id)\"", "?"},
    {"echo \"`id`\"", "?"},
    {"echo $((1+2))", "?"},
    {"diff <(ls a) <(ls b)", "?"},
    {"tee >(wc -l)", "?"},
    {"echo $HOME", "echo $HOME"},
    {"echo ${HOME}", "echo ${HOME}"},
    {"echo \"$HOME/x\"", "echo $HOME/x"},
    {"$CMD arg", "?"},
    {"${CMD} arg", "?"},
    {"\"$CMD\" arg", "?"},
    {"echo ${X:-$(id)}", "?"},
    {"echo $'\\x41'", "echo A"},  // ANSI-C quoting is decoded
    {"$'rm' $'-\\162f' $'a\\tb'", "rm -rf a\tb"},
    {"echo $'\\u00e9'", "?"},  // \u, \U, \c and NUL are doubts
    {"echo $'a\\0b'", "?"},
    {"echo $\"x\"", "?"},
    {"ls *.c", "ls *.c"},
    {"*.sh", "?"},
    {"~/bin/tool", "?"},
    {"echo ~", "echo ~"},
    {"cp {a,b}", "cp {a,b}"},
    // Programs that run commands: the literal command is a segment of its own.
    {"eval ls", "ls"},
    {"eval 'git status && rm -rf x'", "git status ; rm -rf x"},
    {"find . -name '*.o' -exec rm {} +", "find . -name *.o ; rm {}"},
    {"find . -exec sh -c 'ls; rm x' \\; -print", "find . -print ; ls ; rm x"},
    {"find . -name '*.o'", "find . -name *.o"},
    {"ls | xargs rm", "ls ; rm {input}"},
    {"xargs -0 -n 1 -P4 nice rm -v --", "rm -v -- {input}"},
    {"xargs", "echo {input}"},
    {"git -c core.pager='less -R' log", "git -c core.pager=less -R log ; less -R"},
    {"git rebase -x 'make test' main", "git rebase -x make test main ; make test"},
    {"git bisect run make check", "git bisect run make check ; make check"},
    {"git submodule foreach git status", "git submodule foreach git status ; git status"},
    // Commands this splitter refuses to see through.
    {"eval \"$X\"", "?"},
    {"source ./env.sh", "?"},
    {". ./env.sh", "?"},
    {"find . -exec \"$X\" {} +", "?"},
    {"find . -exec {} \\;", "?"},
    {"find . -exec sh -c 'rm {}' \\;", "?"},
    {"find . -exec rm", "?"},
    {"xargs -I{} sh -c 'rm {}'", "?"},
    {"xargs -I % % --version", "?"},
    {"sed 'e id' f", "?"},
    {"sed -e 's/a/b/w out' -e '1e id' f", "?"},
    {"sed --sandbox 's/a/b/e' f", "sed --sandbox s/a/b/e f"},
    {"awk 'BEGIN { system (\"id\") }'", "?"},
    {"awk '{ print > \"out\" }' f", "awk { print > \"out\" } f"},
    {"git grep -O foo", "?"},
    {"git -c include.path=x status", "?"},
    {"trap 'rm -rf /' EXIT", "?"},
    {"if true; then ls; fi", "?"},
    {"for f in *; do rm $f; done", "?"},
    {"while true; do :; done", "?"},
    {"case x in a) ;; esac", "?"},
    {"[[ -f x ]] && ls", "?"},
    {"a ;; b", "?"},
    {"| ls", "?"},
    {"ls |", "?"},
    {"ls &&", "?"},
    // Assignments and wrappers.
    {"FOO=1 make", "?"},  // an assignment can change what runs (PATH, LD_PRELOAD, GIT_*)
    {"A=1 B=2 env", "?"},
    {"FOO=1", "?"},  // it stays set for the commands after it
    {"FOO=$(id) make", "?"},
    {"env FOO=1 rm -rf /", "?"},
    {"env -i PATH=/bin ls", "?"},
    {"env -i ls", "ls"},
    {"env -u HOME ls", "ls"},
    {"env -S 'rm -rf /'", "rm -rf /"},  // plain words: split as GNU env splits them, read again
    {"env -iS'rm -rf' /", "rm -rf /"},
    {"env --split-s='-u HOME ls -l' x", "ls -l x"},
    {"env -S 'rm \"-rf\" /'", "?"},  // quotes, escapes, $ and # in -S: env's own syntax, a doubt
    {"env -S 'ls $HOME'", "?"},
    {"command -p ls", "ls"},
    {"builtin cd /", "cd /"},
    {"exec ls", "ls"},
    {"nohup ./server &", "./server"},
    {"time make", "make"},
    {"nice -n 10 make", "make"},
    {"timeout 5 curl x", "curl x"},
    {"timeout -s KILL 5 curl x", "curl x"},
    {"stdbuf -o L grep x", "grep x"},
    {"env", "env"},
    {"sudo rm -rf /", "sudo rm -rf /"},
    // Nested shells.
    {"bash -c 'git status && rm -rf /'", "git status ; rm -rf /"},
    {"bash -lc \"a && b\"", "a ; b"},
    {"sh -c 'ls'", "ls"},
    {"/bin/sh -ec 'a; b'", "a ; b"},
    {"bash -o pipefail -c 'a | b'", "a ; b"},
    {"bash --norc -c 'a'", "a"},
    {"sh -c 'sh -c \"sh -c ls\"'", "ls"},
    {"bash -c \"$SCRIPT\"", "?"},
    {"bash -c 'echo $(id)'", "?"},
    {"bash -c", "?"},
    {"bash script.sh", "bash script.sh"},
    {"curl x | sh", "curl x ; sh"},
    {"env bash -c 'rm -rf /'", "rm -rf /"},
    {"sh -c 'sh -c \"sh -c \\\"sh -c \\\\\\\"sh -c \\\\\\\\\\\\\\\"ls\\\\\\\\\\\\\\\"\\\\\\\"\\\"\"'", "ls"},
};

TEST(ShellSplit, Table) {
  ASSERT_GE(std::size(kTable), 100u);
  for (const auto& r : kTable) {
    auto got = split_shell_command(r.command);
    EXPECT_EQ(render(got), r.expected) << "command: " << r.command
                                       << (got.uncertain.empty() ? "" : " (doubt: " + got.uncertain.front() + ")");
  }
}

TEST(ShellSplit, DynamicWordsAreMarked) {
  auto s = split_shell_command("rm -f $X \"$Y\" '$Z' *.o");
  ASSERT_TRUE(s.certain());
  ASSERT_EQ(s.segments.size(), 1u);
  const auto& w = s.segments[0].words;
  ASSERT_EQ(w.size(), 6u);
  EXPECT_FALSE(w[1].dynamic);
  EXPECT_TRUE(w[2].dynamic);
  EXPECT_TRUE(w[3].dynamic);
  EXPECT_FALSE(w[4].dynamic);
  EXPECT_TRUE(w[5].dynamic);
}

TEST(ShellSplit, Redirections) {
  auto s = split_shell_command("sort < in.txt > out.txt 2>&1 2>/dev/null >> log");
  ASSERT_TRUE(s.certain());
  ASSERT_EQ(s.segments.size(), 1u);
  const auto& r = s.segments[0].redirects;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_FALSE(r[0].writes);
  EXPECT_EQ(r[0].target.text, "in.txt");
  EXPECT_TRUE(r[1].writes);
  EXPECT_EQ(r[1].target.text, "out.txt");
  EXPECT_EQ(r[2].target.text, "log");
  EXPECT_FALSE(split_shell_command("echo > $OUT").certain());
}

TEST(ShellSplit, DeepNestingIsUncertain) {
  std::string cmd = "ls";
  for (int i = 0; i < 10; ++i) {
    std::string quoted = "'";
    for (char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd = "sh -c " + quoted + "'";
  }
  EXPECT_FALSE(split_shell_command(cmd).certain());
}

// The readers of programs that run commands take any truncation of a tricky
// line (every prefix, as a shell line and as the argv of its words) without
// reading past it; what they read stays a prefix of the whole line's verdict
// (a run-away nesting is a doubt).
TEST(ShellSplit, ProgramReadersTakeEveryPrefix) {
  const char* lines[] = {
      "xargs -0 -I{} -n 1 -P4 -e -ixx --replace=yy env nice rm -rf {} yy --",
      "find -H . -D x -O3 ( -name a -o -name b ) -exec sh -c 'rm {}' \\; -execdir rm -r {} + -ok ls \\; -delete",
      "git -C . -c core.pager='less -R' -c alias.x='!rm -rf y' --config-env=a.b=C --git-dir=d --exec-path=/e grep -O'rm x' -e -O --open=cat foo",
      "git rebase -x 'make' --exec='rm -rf x' -xls --onto main; git bisect run rm -rf x; git submodule foreach --recursive rm x",
      "sed -n -e 's/a\\/b/c/gw out' -e '1~2{/x/I,+3!y/ab/cd/;b end;:end}' -e '$a text' -e 'q5' --expression='s|x|y|e' f",
      "awk -F: -v 'x=1' -e 'BEGIN { a = \"|\" ; b = /x|y/ ; c = a || b } # system(\"x\")' -- f",
      "eval -- 'eval \"eval ls\"'",
  };
  for (const char* line : lines) {
    std::string text(line);
    for (std::size_t n = 0; n <= text.size(); ++n) {
      auto prefix = text.substr(0, n);
      auto split = split_shell_command(prefix);
      std::vector<std::string> words;
      for (const auto& seg : split.segments) {
        for (const auto& w : seg.words) words.push_back(w.text);
      }
      (void)split_argv(words);
    }
  }
  std::vector<std::string> deep(12, "eval");  // each eval a level deeper
  deep.push_back("ls");
  auto nested = split_argv(deep);
  ASSERT_FALSE(nested.certain());
  EXPECT_NE(nested.uncertain.front().find("nested more than 8 deep"), std::string::npos) << nested.uncertain.front();
  EXPECT_EQ(render(split_argv({"eval", "eval", "ls"})), "ls");
}

TEST(ShellSplit, ArgvRequests) {
  auto plain = split_argv({"echo", "$(rm -rf /)", "*"});
  ASSERT_TRUE(plain.certain());
  ASSERT_EQ(plain.segments.size(), 1u);
  EXPECT_FALSE(plain.segments[0].words[1].dynamic);  // no shell: these are literal bytes
  auto nested = split_argv({"bash", "-c", "a && b"});
  EXPECT_EQ(render(nested), "a ; b");
  EXPECT_EQ(render(split_argv({"env", "sh", "-c", "rm x"})), "rm x");
  // An assignment through env is a doubt, and the command is still read.
  auto assigned = split_argv({"env", "X=1", "sh", "-c", "rm x"});
  EXPECT_FALSE(assigned.certain());
  ASSERT_EQ(assigned.segments.size(), 1u);
  EXPECT_EQ(assigned.segments[0].words[0].text, "rm");
}

// What stays a doubt but is still read, so that a deny rule sees the
// commands inside: command and process substitutions (their scripts, after
// the line's own segments), compound commands' bodies, function bodies.
TEST(ShellSplit, DoubtsStillShowTheCommandsInside) {
  const row rows[] = {
      {"echo $(rm -rf /)", "echo $(rm -rf /) ; rm -rf /"},
      {"echo \"$(a; b)\" c", "echo $(a; b) c ; a ; b"},
      {"echo `a \\`b\\``", "echo `a \\`b\\`` ; a `b` ; b"},
      {"x=$(a) y", "y ; a"},
      {"echo $(echo $(a)) z", "echo $(echo $(a)) z ; echo $(a) ; a"},
      {"diff <(ls a) >(b)", "diff <(ls a) >(b) ; ls a ; b"},
      {"if a; then b; elif c; then d; else e; fi && f", "a ; b ; c ; d ; e ; f"},
      {"for x in a b; do c $x; done", "c $x"},
      {"for x in a b\ndo c; done", "c"},
      {"while a; do b; done | c", "a ; b ; c"},
      {"[[ -d x && y ]] || z", "z"},
      {"f() { a; }; f", "a ; f"},
      {"function f { a; }", "a"},
      {"function f () { a; }", "a"},
      {"coproc a b", "a b"},
      {"eval \"a -r $X\"", "a -r $X"},
      {"bash -c \"a $X\" b", "a $X ; bash -c a $X b"},
  };
  for (const auto& r : rows) {
    auto got = split_shell_command(r.command);
    EXPECT_FALSE(got.certain()) << r.command;
    std::string out;
    for (const auto& seg : got.segments) {
      std::string words;
      for (const auto& w : seg.words) words += (words.empty() ? "" : " ") + w.text;
      out += (out.empty() ? "" : " ; ") + words;
    }
    EXPECT_EQ(out, r.expected) << r.command;
  }
  // "[" alone is the test command; a closed bracket is a glob.
  auto test = split_shell_command("[ -f x ]");
  ASSERT_TRUE(test.certain());
  EXPECT_FALSE(test.segments[0].words[0].dynamic);
  EXPECT_TRUE(split_shell_command("ls [ab].c").segments[0].words[1].dynamic);
  // Wrappers are unwrapped however deep (each round takes a word); past 256, a doubt.
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "env nice ";
  EXPECT_EQ(render(split_shell_command(deep + "rm -rf /")), "rm -rf /");
  std::string deeper;
  for (int i = 0; i < 300; ++i) deeper += "env ";
  EXPECT_EQ(render(split_shell_command(deeper + "ls")), "?");
  // case: the patterns are not commands, the clauses' commands are.
  for (const auto& [line, commands] : {std::pair{"case x in a) rm -rf /;; esac", "rm -rf"},  // the first two words
                                      std::pair{"case $1 in\n (a|b) c d ;;\n *) e;& f) g;;& esac; h", "c d ; e ; g ; h"},
                                      std::pair{"case x in a) case y in b) c;; esac;; esac", "c"}}) {
    auto got = split_shell_command(line);
    EXPECT_FALSE(got.certain()) << line;
    std::string out;
    for (const auto& seg : got.segments) out += (out.empty() ? "" : " ; ") + seg.words[0].text + (seg.words.size() > 1 ? " " + seg.words[1].text : "");
    EXPECT_EQ(out, commands) << line;
  }
  EXPECT_EQ(render(split_shell_command("a ;; b")), "?");  // outside a case
}

}  // namespace
}  // namespace cordon::governance
