#!/bin/bash
# PID 1 of a kernel-matrix guest (scripts/kernel-matrix.sh). The root file
# system is the host's /, read-only over virtio-9p; this script mounts what a
# Debian system would have (proc, sysfs, devtmpfs, cgroup2 unified, tmpfs for
# every writable place), adds the unprivileged user, delegates a cgroup v2
# subtree to it the way systemd delegates user@UID.service, runs the tests and
# writes their results to the "results" share, then powers the guest off.
set -u
stage="$(dirname "$0")"

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mount -t securityfs securityfs /sys/kernel/security
for dir in /run /root /home; do mount -t tmpfs -o mode=755 tmpfs "$dir"; done
# The stage (binaries, this script) sits in the host's /tmp, about to be covered.
mkdir -p /run/stage && mount --bind "$stage" /run/stage && stage=/run/stage
for dir in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs "$dir"; done
mkdir -p /run/results
mount -t 9p -o trans=virtio,version=9p2000.L results /run/results
out=/run/results
config="$(sed -n 's/.*cordon\.config=\([a-z]*\).*/\1/p' /proc/cmdline)"
suites="$(sed -n 's/.*cordon\.suites=\([a-z,]*\).*/\1/p' /proc/cmdline)"
who_runs="$(sed -n 's/.*cordon\.who=\([a-z,]*\).*/\1/p' /proc/cmdline)"
exec >"$out/guest.log" 2>&1
echo "guest: kernel $(uname -r), config $config, cmdline: $(cat /proc/cmdline)"
echo "guest: lsm $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(securityfs not mounted)')"
ip link set lo up

finish() {
  sync
  touch "$out/done"
  sync
  /bin/busybox poweroff -f  # reboot(2) directly: there is no init system to ask
  sleep 10
}
trap finish EXIT

# The unprivileged user (the host's own cordon-test when it has one).
user=cordon-test
if ! getent passwd "$user" >/dev/null; then
  for f in passwd group; do cp "/etc/$f" "/run/$f"; done
  echo "$user:x:1990:1990:cordon matrix:/home/$user:/bin/bash" >>/run/passwd
  echo "$user:x:1990:" >>/run/group
  for f in passwd group; do mount --bind "/run/$f" "/etc/$f"; done
fi
uid="$(id -u "$user")"
gid="$(id -g "$user")"
home="/home/$user"
mkdir -p "$home" && chown "$uid:$gid" "$home"

# Configuration nouserns: guest_checks.py sets the sysctls (Debian's
# kernel.unprivileged_userns_clone=0 first, then user.max_user_namespaces=0).

# cgroup v2 as systemd lays it out: controllers enabled from the root down to
# user-UID.slice; user@UID.service delegated (the directory and its
# cgroup.procs, cgroup.subtree_control and cgroup.threads owned by the user);
# the user's "manager" enables the controllers below it and runs its
# programs in app.slice/*.scope, as systemd --user does.
cg=/sys/fs/cgroup
controllers="+memory +pids +cpu"
echo "$controllers" >"$cg/cgroup.subtree_control"
mkdir -p "$cg/user.slice/user-$uid.slice/user@$uid.service"
echo "$controllers" >"$cg/user.slice/cgroup.subtree_control"
echo "$controllers" >"$cg/user.slice/user-$uid.slice/cgroup.subtree_control"
delegated="$cg/user.slice/user-$uid.slice/user@$uid.service"
chown "$uid:$gid" "$delegated" "$delegated"/cgroup.{procs,subtree_control,threads}
as_user() {  # as_user CGROUP CMD...: CMD as the user, started in CGROUP ("-": where it is)
  local cgroup="$1"
  shift
  sh -c '[ "$0" = - ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "$cgroup" \
    setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER="$user" LOGNAME="$user" TERM=dumb "$@"
}
# (The manager enables controllers below a cgroup it is not in: no internal processes.)
as_user - sh -c "echo '$controllers' >'$delegated/cgroup.subtree_control' &&
  mkdir '$delegated/app.slice' && echo '$controllers' >'$delegated/app.slice/cgroup.subtree_control' &&
  mkdir '$delegated/app.slice/matrix.scope' '$delegated/app.slice/solo.scope'" ||
  echo "guest: could not lay out the delegated subtree"
scope="$delegated/app.slice/matrix.scope"

export CORDON_MATRIX_CONFIG="$config" CORDON_MATRIX_OUT="$out" CORDON_MATRIX_USER="$user"
export CORDON_MATRIX_DELEGATED="$delegated" CORDON_MATRIX_UID="$uid" CORDON_MATRIX_GID="$gid"
test_env=(CORDON_CLI="$stage/cordon" CORDON_SUPERVISOR="$stage/cordon-supervisor" CORDON_SOURCE_DIR="$stage/source"
  CORDON_ESCAPE_PROBE="$stage/escape-probe"
  CORDON_ESCAPE_HELPER="$stage/escape-setuid-helper" CORDON_ESCAPE_SETUID_HELPER="$stage/setuid/escape-setuid-helper")
# The integration tests that exercise each control (docs/kernels.md says why
# these): a subset sized for about 10 minutes of CI under TCG.
integration_filter="$(cat "$stage/integration-filter")"
# Only what depends on the kernel runs here: the escape classes of the
# filesystem (Landlock), network and Unix sockets (namespaces, Landlock
# scopes), kernel interfaces (seccomp), resources and cgroups (cgroup v2
# delegation), devices, core dumps and the bind race. The classes decided in
# cordon's own code (deferred execution, stdio, workspace, report target,
# terminal filter) give the same answer on any kernel and run on the host.
# Without Landlock only the filesystem layer changes: its escapes run there.
# Two tests bound the wall time of a run with a 1 s or 3 s timeout, which TCG
# (some 10x slower at creating processes) cannot meet: they stay on the host.
escape_filter='EscapeFilesystem*:EscapeNetwork*:EscapeFilteredNetwork*:EscapeUnixSockets*:EscapeKernel*:EscapeResources*'
escape_filter+=':EscapeCgroupNamespace*:EscapeKilledTreeCpu*:EscapeDevices*:EscapeCoreDumps*:EscapeBindRace*'
escape_filter+='-EscapeResources.ForkBombIsKilledWithItsTreeAtTheTimeout:EscapeResources.CpuSpinIsKilledAtTheTimeout'
[ "$config" = nolandlock ] && escape_filter='EscapeFilesystem*'
# Each suite once per configuration, as the unprivileged user in its delegated
# cgroup (the harder case) unless cordon.who= says otherwise; the checks try
# both users where the answer differs (cgroup placement, user namespaces).
who_runs="${who_runs:-unprivileged}"

run_gtest() {  # run_gtest WHO BINARY FILTER
  local who="$1" binary="$2" filter="$3" json="$out/$2.$1.$config.kernels.json" started=$SECONDS declared
  # This guest's own declaration, as that user (scripts/host-expect.py, tests/host_expect.h).
  if [ "$who" = root ]; then
    declared="$(python3 "$stage/host-expect.py")"
    env "${test_env[@]}" CORDON_EXPECT="$declared" "$stage/$binary" --gtest_brief=1 --gtest_filter="$filter" \
      --gtest_output="json:$json"
  else
    declared="$(as_user - python3 "$stage/host-expect.py")"
    as_user "$scope" "${test_env[@]}" CORDON_EXPECT="$declared" "$stage/$binary" --gtest_brief=1 \
      --gtest_filter="$filter" --gtest_output="json:$json"
  fi
  echo "guest: $binary as $who: CORDON_EXPECT=$declared"
  echo "guest: $binary as $who: status $?, $((SECONDS - started)) s"
}

wants() { case ",$suites," in *",$1,"*) return 0 ;; esac; return 1; }
if wants checks; then
  echo "guest: $(date -u +%T) checks"
  started=$SECONDS
  python3 "$stage/guest_checks.py"
  echo "guest: checks took $((SECONDS - started)) s"
fi
# Without user namespaces linux-os-sandbox runs (docs/linux-backend.md,
# "Without namespaces"): the escape suite's filesystem, process (kernel and
# OsSandbox) and network classes against it, forced as the escape_os_sandbox
# CTest test does, as root and as the user. Landlock ABI 2 has no truncate
# right, so filesystem_write is partial and each policy would be refused:
# the tests accept that level (CORDON_TEST_ACCEPT, tests/integration/harness.h)
# and each probe expects what the report claims at that ABI.
os_sandbox_filter='EscapeFilesystem*:EscapeKernel*:EscapeNetwork*:OsSandbox*'
if [ "$config" = nouserns ] && wants escape; then
  test_env+=(CORDON_LINUX_BACKEND=os-sandbox CORDON_TEST_ACCEPT=filesystem_write=partial)
  for who in root unprivileged; do
    run_gtest "$who" cordon_escape_tests "$os_sandbox_filter"
  done
fi
if [ "$config" != nouserns ]; then
  for who in ${who_runs//,/ }; do
    wants escape && run_gtest "$who" cordon_escape_tests "$escape_filter"
    if wants integration && [ "$config" = shipped ]; then
      run_gtest "$who" cordon_integration_tests "$integration_filter"
    fi
  done
fi
echo "guest: $(date -u +%T) done; cgroups left: $(find "$cg" -name 'cordon-*' | wc -l)"
