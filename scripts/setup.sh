#!/usr/bin/env bash
# Installs the Debian 12 packages cordon needs to build, test and demo.
# Idempotent; run as root (or through sudo).
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ clang pkg-config
  # ccache: the CI's clean-clone builds (scripts/test-newcomer.sh, the .deb of scripts/test-packaging.sh)
  # reuse the objects of build/ instead of compiling everything again (CMakeLists.txt uses it when present)
  ccache
  libseccomp-dev nlohmann-json3-dev libcli11-dev libasio-dev libmd-dev
  libgtest-dev libgmock-dev
  # the kernel matrix (scripts/kernel-matrix.sh): QEMU for the Debian 6.1 guest, busybox for its
  # initramfs, bubblewrap to run cordon nested inside another sandbox
  qemu-system-x86 busybox-static bubblewrap
  # internationalized host names in network rules (IDNA, src/core/idna.h)
  libidn2-dev
  # libunistring's static archive (libidn2 needs it): the CLI and the supervisor helper link
  # libidn2.a and libunistring.a, two shared libraries fewer to load on every launch (docs/benchmarks.md)
  libunistring-dev
  # TLS termination in the broker (docs/tls.md): OpenSSL under asio's SSL layer (libasio-dev above),
  # and the CA bundle the run's authority is appended to
  libssl-dev ca-certificates
  # what the tests run inside the sandbox, and to run them as a second user
  git make gcc python3 python3-venv python3-jsonschema procps util-linux passwd
  # real network clients for the filtered-network tests (they talk to loopback servers only),
  # and ip(8) for the test that builds its own network namespace
  curl iproute2
  # Node.js: its built-in fetch ignores proxy variables (the transparent-routing tests)
  nodejs
  # GNU Guile: a second, independent reader of the generated macOS Seatbelt profiles
  # (tests/macos/guile_read_check.scm)
  guile-3.0
  # the gate manifest reader of `cordon gate run` (TOML, header-only use: src/gates/manifest.cpp)
  libtomlplusplus-dev
  # build tools the stdio regression test runs the way builds use them (tests/integration/build_tools_test.cpp):
  # make, tar, coreutils' install and cp -p are already here; rsync -a is not
  rsync
  # the Windows backend, cross-compiled and tested under wine (scripts/test-windows.sh):
  # mingw-w64 with posix threads, GoogleTest's sources to build for Windows, the 64-bit wine loader
  g++-mingw-w64-x86-64-posix googletest wine64
  # the Python package (bindings/python, docs/python.md): pytest runs its tests, pip and setuptools
  # install it from the tree; the Node addon (bindings/node) builds on node_api.h from nodejs above
  python3-pytest python3-pip python3-setuptools
  # tsc, to type-check the Node package's TypeScript declarations (bindings/node/test/types/)
  node-typescript
  # a second, independent YAML reader for the round trip of `cordon gate render --kubernetes`
  # (tests/gates/kubernetes_test.cpp); the Python sidecar of tests/sidecars/ needs only python3
  python3-yaml
  # the workload suite (scripts/test-workloads.sh, tests/workloads/): script(1) for the interactive
  # shell through a pty; pytest, cmake, make, g++, git, node, curl and python3-venv are listed above
  # (npm for `npm ci` of a local dependency: below)
  bsdutils
  # RE2, the linear-time regular expressions of the filesystem worker's grep (src/fsworker/, docs/fs-worker.md);
  # its static archive is linked into the static cordon-fs-worker
  libre2-dev
  # the Debian package and its checks (scripts/test-packaging.sh): debhelper and dpkg-dev build it,
  # lintian checks it, devscripts for debuild/dch, man-db to check the generated man pages
  debhelper dpkg-dev devscripts lintian fakeroot man-db
  # the shells whose generated completions the packaging checks load (zsh -n, fish)
  zsh fish
)
# Debian's nodejs keeps node_api.h in libnode-dev (NodeSource's nodejs ships it itself, and conflicts with it).
if ! dpkg-query -S /usr/include/node/node_api.h >/dev/null 2>&1; then packages+=(libnode-dev); fi
# Debian's nodejs leaves npm to its own package; NodeSource's ships npm and conflicts with Debian's.
if ! command -v npm >/dev/null 2>&1; then packages+=(npm); fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo "$0" "$@"
  fi
  echo "setup: installing Debian packages needs root and sudo is not installed: run it as root, e.g. su -c $0" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all ${#packages[@]} packages present"

# The CI workflow validator (scripts/check-workflows.sh, CTest `workflows`):
# npm's @action-validator/cli, installed once under /opt/cordon-tools so the
# check runs offline. When npm cannot reach its registry the host records
# that, and the check is skipped there only.
tools=/opt/cordon-tools
if [ ! -x "$tools/node_modules/.bin/action-validator" ]; then
  mkdir -p "$tools"
  if npm install --prefix "$tools" --no-audit --no-fund @action-validator/cli@0.6 >/dev/null 2>&1; then
    rm -f "$tools/action-validator.unavailable"
  else
    echo "npm could not install @action-validator/cli on $(date -u +%F)" > "$tools/action-validator.unavailable"
  fi
fi
