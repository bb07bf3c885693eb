#!/usr/bin/env bash
# Packaging checks (docs/packaging.md). ONE build: the plain Release build
# (cmake -DCMAKE_BUILD_TYPE=Release, no presets; warnings are not errors
# there, and there must be none) with Debian's flags (dpkg-buildflags), prefix
# /usr, the multiarch libdir and debian/rules' options. Its `cmake --install`
# into a staging directory (DESTDIR) is checked: every file, the C API's ABI,
# a consumer project (tests/consumer/) built against it with CMake and with
# pkg-config, the C and Python hosts, each running a confined command. Then
# the Debian package is made from a clean clone of the same install
# (dpkg-buildpackage with CORDON_BUILT_TREE: debian/rules installs that tree,
# nothing is compiled twice), checked with lintian, installed, run
# (`cordon run -- true`, the consumer against /usr: the compiled-in
# /usr/libexec paths) and removed again. The build runs with 2 jobs.
#
# Usage: scripts/test-packaging.sh [RESULTS_DIR]; with RESULTS_DIR, writes
# RESULTS_DIR/packaging.xml (JUnit) for scripts/test.sh's summary line.
# CORDON_PACKAGING_DEB=0 skips the Debian package (it says so in the results).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-}"
work="$(mktemp -d /tmp/cordon-packaging-XXXXXX)"
trap 'rm -rf "$work"' EXIT
build="$root/build-release"
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
stage="$work/stage"  # DESTDIR of the install checks: the prefix /usr is compiled in
prefix="$stage/usr"
libdir="$prefix/lib/$multiarch"
# The staged install's helpers: the compiled-in /usr/libexec ones exist only
# once the .deb is installed (checked then).
staged_helpers=(CORDON_SUPERVISOR="$prefix/libexec/cordon/cordon-supervisor"
  CORDON_FS_WORKER="$prefix/libexec/cordon/cordon-fs-worker")

cases=() failures=() skips=()
pass() { cases+=("$1"); }
fail() { cases+=("$1"); failures+=("$1"); echo "packaging: FAILED: $1${2:+: $2}"; }
skip() { cases+=("$1"); skips+=("$1"); echo "packaging: skipped $1: $2"; }
check() {  # check NAME COMMAND...: passes when COMMAND exits 0 (its output goes to $work/last.log)
  local name=$1
  shift
  if "$@" >"$work/last.log" 2>&1; then pass "$name"; else fail "$name" "$(tail -5 "$work/last.log")"; fi
}

echo "== packaging: plain Release build (cmake -DCMAKE_BUILD_TYPE=Release, no presets), Debian's flags and layout"
export CCACHE_BASEDIR="$root"
release_build() {
  # dpkg-buildflags as debhelper uses them (CPPFLAGS go with the compiler
  # flags); Release's -O3 comes after its -O2. The options are debian/rules'.
  local CFLAGS CPPFLAGS CXXFLAGS LDFLAGS options
  eval "$(cd "$root" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh |
    grep -E '^export (CFLAGS|CPPFLAGS|CXXFLAGS|LDFLAGS)=')"
  options="$(make -s --no-print-directory -C "$root" -f debian/rules print-cmake-options)"
  # shellcheck disable=SC2086  # the options are words
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" $options \
    -DCMAKE_C_FLAGS="$CPPFLAGS $CFLAGS" -DCMAKE_CXX_FLAGS="$CPPFLAGS $CXXFLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="$LDFLAGS" -DCMAKE_SHARED_LINKER_FLAGS="$LDFLAGS" \
    -DCMAKE_MODULE_LINKER_FLAGS="$LDFLAGS" >"$work/configure.log" &&
    cmake --build "$build" -j2 >"$work/release.log" 2>&1
}
if release_build; then pass "plain Release build"; else fail "plain Release build" "$(tail -20 "$work/release.log")"; fi
# Warnings are not errors in this build, so the build succeeding says nothing about them.
if grep -q 'warning:' "$work/release.log"; then
  fail "Release build (-O3) without compiler warnings" "$(grep -m5 'warning:' "$work/release.log")"
else
  pass "Release build (-O3) without compiler warnings"
fi

echo "== packaging: DESTDIR=$stage cmake --install (prefix /usr)"
rm -rf "$stage"
check "cmake --install (DESTDIR)" env DESTDIR="$stage" cmake --install "$build"
lib="lib/$multiarch"
for f in bin/cordon libexec/cordon/cordon-supervisor $lib/libcordon.a $lib/cmake/cordon/cordon-config.cmake \
  $lib/cmake/cordon/cordon-targets.cmake $lib/pkgconfig/cordon.pc include/cordon/cordon.h include/cordon/run.h \
  share/cordon/schemas/policy.v1.schema.json share/man/man1/cordon.1 share/man/man1/cordon-run.1 \
  share/man/man1/cordon-policy-explain.1 share/bash-completion/completions/cordon share/zsh/vendor-completions/_cordon \
  share/fish/vendor_completions.d/cordon.fish $lib/libcordon_c.so.1 $lib/libcordon_c.so $lib/pkgconfig/cordon-c.pc \
  include/cordon/cordon_c.h libexec/cordon/cordon-fs-worker; do
  if [ -e "$prefix/$f" ]; then pass "installed $f"; else fail "installed $f"; fi
done
# The C API's ABI (docs/library.md): the soname, and nothing exported but cordon_* (and the version nodes).
check "installed libcordon_c.so.1 has soname libcordon_c.so.1" sh -c "
  objdump -p '$libdir/libcordon_c.so.1' | grep -qE '^ +SONAME +libcordon_c\.so\.1\$'"
check "libcordon_c exports only cordon_* (version nodes CORDON_C_1 and CORDON_C_1.N)" sh -c "
  syms=\$(nm -D --defined-only '$libdir/libcordon_c.so.1' | awk '{print \$3}') &&
  [ -n \"\$syms\" ] && ! printf '%s\\n' \$syms | grep -vE '^(cordon_[a-z0-9_]+(@@CORDON_C_1(\\.[0-9]+)?)?|CORDON_C_1(\\.[0-9]+)?)\$'"
# A Python host against the installed library: the package from the source
# tree, copied away from any build tree, finds libcordon_c.so.1 with the loader.
python_smoke() {  # python_smoke NAME [ENV...]: cordon.run and cordon.fs against the library the loader finds
  local name=$1
  shift
  rm -rf "$work/python" && mkdir -p "$work/python" && cp -r "$root/bindings/python/cordon" "$work/python/"
  check "$name" env -u CORDON_LIBRARY -u CORDON_BUILD_DIR -u CORDON_SUPERVISOR -u CORDON_FS_WORKER "$@" \
    PYTHONPATH="$work/python" PYTHONDONTWRITEBYTECODE=1 sh -c "cd '$confined_workspace' && python3 -c '
import cordon, cordon.fs
r = cordon.run(\"workspace-write\", [\"sh\", \"-c\", \"echo hi; touch /usr/x\"], cwd=\".\")
print(r)
assert r.stdout == b\"hi\\n\" and r.exit_code == 1, r
with cordon.fs.Worker(\".\") as w:
    w.write(\"f.txt\", \"x\")
    assert w.read(\"f.txt\") == \"x\"
    try:
        w.read(\"../f.txt\")
        raise SystemExit(\"../ was not refused\")
    except cordon.fs.FsError as e:
        assert e.code == \"path_escape\", e.code
print(cordon.library_version(), cordon._lib.abi_minor())
'"
}
check "installed man pages are valid roff (man --warnings)" \
  sh -c "for p in '$prefix'/share/man/man1/*.1; do out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l \"\$p\" 2>&1 >/dev/null); [ -z \"\$out\" ] || { echo \"\$p: \$out\"; exit 1; }; done"
check "installed bash completion loads" bash -c "source '$prefix/share/bash-completion/completions/cordon' && complete -p cordon"
check "installed bash completion completes profile names" bash -c "
  source '$prefix/share/bash-completion/completions/cordon'; PATH='$prefix/bin':\$PATH
  COMP_WORDS=(cordon run --profile ''); COMP_CWORD=3; _cordon; [[ \" \${COMPREPLY[*]} \" == *' read-only '* ]]"
check "installed zsh completion parses (zsh -n)" zsh -n "$prefix/share/zsh/vendor-completions/_cordon"
check "installed fish completion completes subcommands" sh -c "
  PATH='$prefix/bin':\$PATH fish -c 'source $prefix/share/fish/vendor_completions.d/cordon.fish; complete -C \"cordon policy ex\"' |
  grep -q '^explain'"

confined_workspace="$work/workspace"
mkdir -p "$confined_workspace"
echo "== packaging: consumer (tests/consumer/) against the staged install: CMake, then pkg-config"
check "consumer: find_package(cordon) configures and builds" sh -c "
  cmake -S '$root/tests/consumer' -B '$work/consumer-cmake' -DCMAKE_PREFIX_PATH='$prefix' -DCMAKE_BUILD_TYPE=Release &&
  cmake --build '$work/consumer-cmake' -j2"
check "consumer (CMake) runs a confined command with the staged supervisor" \
  env "${staged_helpers[@]}" "$work/consumer-cmake/consumer" "$confined_workspace"
check "consumer: pkg-config --cflags --libs cordon builds it" sh -c "
  PKG_CONFIG_PATH='$libdir/pkgconfig' g++ -O2 -o '$work/consumer-pc' '$root/examples/host_program.cpp' \
    \$(PKG_CONFIG_PATH='$libdir/pkgconfig' pkg-config --cflags --libs cordon)"
check "consumer (pkg-config) runs a confined command" env "${staged_helpers[@]}" "$work/consumer-pc" "$confined_workspace"
# The C host of docs/library.md (its first ```c block), built with cordon-c.pc.
awk '/^```c$/ { inside = 1; next } /^```$/ && inside { exit } inside' "$root/docs/library.md" >"$work/host.c"
check "C consumer: pkg-config --cflags --libs cordon-c builds the docs/library.md example" sh -c "
  cc -o '$work/host-c' '$work/host.c' \$(PKG_CONFIG_PATH='$libdir/pkgconfig' pkg-config --cflags --libs cordon-c)"
check "C consumer runs a confined command with the staged library and supervisor" sh -c "
  env ${staged_helpers[*]} LD_LIBRARY_PATH='$libdir' '$work/host-c' '$confined_workspace' | grep -q 'hello from the sandbox'"
python_smoke "python: import cordon; cordon.run and cordon.fs with the staged library" LD_LIBRARY_PATH="$libdir" \
  "${staged_helpers[@]}"

deb() {
  echo "== packaging: Debian package (dpkg-buildpackage -us -uc -b on a clean clone, installing $build)"
  local debdir="${CORDON_PACKAGING_DEB_DIR:-$root/build-deb}"
  rm -rf "$debdir" && mkdir -p "$debdir"
  git clone -q "$root" "$debdir/cordon"
  local log="$debdir/build.log"
  if ! (cd "$debdir/cordon" && CORDON_BUILT_TREE="$build" dpkg-buildpackage -us -uc -b >"$log" 2>&1); then
    fail "dpkg-buildpackage -us -uc -b" "$(tail -20 "$log")"
    return
  fi
  pass "dpkg-buildpackage -us -uc -b"
  local bin dev lib
  bin=$(ls "$debdir"/cordon_*_amd64.deb) dev=$(ls "$debdir"/libcordon-dev_*_amd64.deb)
  lib=$(ls "$debdir"/libcordon-c1_*_amd64.deb)
  # The listings are read whole first: `dpkg-deb -c | grep -q` under pipefail
  # fails whenever grep stops early and dpkg-deb gets SIGPIPE.
  local bin_list dev_list lib_list
  bin_list=$(dpkg-deb -c "$bin") dev_list=$(dpkg-deb -c "$dev") lib_list=$(dpkg-deb -c "$lib")
  # The file is named after the C ABI's minor (src/capi/CMakeLists.txt): libcordon_c.so.1.MINOR.0.
  local minor
  minor=$(sed -n 's/^#define CORDON_ABI_MINOR \([0-9][0-9]*\)$/\1/p' "$root/include/cordon/cordon_c.h")
  for f in ./usr/lib/x86_64-linux-gnu/libcordon_c.so.1 "./usr/lib/x86_64-linux-gnu/libcordon_c.so.1.$minor.0"; do
    if grep -qF " $f" <<<"$lib_list"; then pass "libcordon-c1.deb has ${f#./}"; else fail "libcordon-c1.deb has ${f#./}"; fi
  done
  if dpkg-deb -I "$lib" shlibs 2>/dev/null | grep -q "^libcordon_c 1 libcordon-c1" ||
    dpkg-deb -I "$lib" symbols 2>/dev/null | grep -q "^libcordon_c.so.1 libcordon-c1"; then
    pass "libcordon-c1.deb has its symbols/shlibs file"
  else
    fail "libcordon-c1.deb has its symbols/shlibs file"
  fi
  for f in ./usr/bin/cordon ./usr/libexec/cordon/cordon-supervisor ./usr/share/man/man1/cordon.1.gz \
    ./usr/share/man/man1/cordon-run.1.gz ./usr/share/bash-completion/completions/cordon \
    ./usr/share/zsh/vendor-completions/_cordon ./usr/share/fish/vendor_completions.d/cordon.fish \
    ./usr/share/cordon/schemas/policy.v1.schema.json ./usr/share/doc/cordon/packaging.md; do
    if grep -qF " $f" <<<"$bin_list"; then pass "cordon.deb has ${f#./}"; else fail "cordon.deb has ${f#./}"; fi
  done
  for f in ./usr/include/cordon/cordon.h ./usr/lib/x86_64-linux-gnu/libcordon.a \
    ./usr/lib/x86_64-linux-gnu/cmake/cordon/cordon-config.cmake ./usr/lib/x86_64-linux-gnu/pkgconfig/cordon.pc \
    ./usr/lib/x86_64-linux-gnu/libcordon_c.so ./usr/lib/x86_64-linux-gnu/pkgconfig/cordon-c.pc \
    ./usr/include/cordon/cordon_c.h; do
    if grep -qF " $f" <<<"$dev_list"; then pass "libcordon-dev.deb has ${f#./}"; else fail "libcordon-dev.deb has ${f#./}"; fi
  done
  # lintian: no error or warning (the remaining tags are explained in docs/packaging.md).
  lintian --tag-display-limit 0 "$debdir"/*.changes >"$debdir/lintian.log" 2>&1 || true
  if grep -E '^[EW]: ' "$debdir/lintian.log"; then
    fail "lintian: no errors or warnings" "$(grep -E '^[EW]: ' "$debdir/lintian.log" | head -10)"
  else
    pass "lintian: no errors or warnings"
  fi
  if [ "$(id -u)" -ne 0 ]; then
    skip "the .deb installs and runs" "installing a package needs root"
    return
  fi
  if dpkg-query -W -f='${Status}' cordon 2>/dev/null | grep -q "install ok installed"; then
    skip "the .deb installs and runs" "a cordon package is already installed on this machine; not replacing it"
    return
  fi
  check "the .debs install (apt-get install ./*.deb)" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$bin" "$lib" "$dev"
  check "installed: cordon run -- true" sh -c "cd '$confined_workspace' && /usr/bin/cordon run --no-summary -- true"
  check "installed: man -w cordon-run" man -w cordon-run
  check "installed: the consumer builds against /usr and runs confined" sh -c "
    cmake -S '$root/tests/consumer' -B '$work/consumer-deb' -DCMAKE_BUILD_TYPE=Release &&
    cmake --build '$work/consumer-deb' && env -u CORDON_SUPERVISOR '$work/consumer-deb/consumer' '$confined_workspace'"
  python_smoke "installed: python3 -c 'import cordon; cordon.run(...)' loads /usr/lib/x86_64-linux-gnu/libcordon_c.so.1"
  check "the packages remove cleanly" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq --purge cordon \
    libcordon-c1 libcordon-dev
}
if [ "${CORDON_PACKAGING_DEB:-1}" = 0 ]; then
  skip "the Debian package" "CORDON_PACKAGING_DEB=0"
else
  deb
fi

echo "packaging: ${#cases[@]} checks, ${#failures[@]} failed, ${#skips[@]} skipped"
if [ -n "$results" ]; then
  xml() { local s=${1//&/&amp;}; s=${s//</&lt;}; s=${s//>/&gt;}; printf '%s' "${s//\"/&quot;}"; }
  {
    echo "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    echo "<testsuite name=\"packaging\" tests=\"${#cases[@]}\" failures=\"${#failures[@]}\" skipped=\"${#skips[@]}\">"
    for c in "${cases[@]}"; do
      echo -n "  <testcase classname=\"packaging\" name=\"$(xml "$c")\""
      if printf '%s\n' "${failures[@]}" | grep -qxF -- "$c"; then
        echo "><failure message=\"failed\"/></testcase>"
      elif printf '%s\n' "${skips[@]}" | grep -qxF -- "$c"; then
        echo "><skipped message=\"see the packaging log\"/></testcase>"
      else
        echo "/>"
      fi
    done
    echo "</testsuite>"
  } >"$results/packaging.xml"
fi
[ ${#failures[@]} -eq 0 ]
