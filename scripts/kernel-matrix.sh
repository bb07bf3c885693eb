#!/usr/bin/env bash
# The kernel matrix (docs/kernels.md): boots Debian 12's own kernel (6.1) in a
# QEMU guest with this host's / shared read-only over virtio-9p, and runs
# cordon's confinement tests there in three configurations:
#   shipped    the kernel as Debian ships it (its CONFIG_LSM already lists
#              landlock: nothing added to the command line), unified cgroup v2
#              with a subtree delegated to the unprivileged user;
#   nolandlock the same kernel booted with an lsm= list that leaves Landlock out;
#   nouserns   user.max_user_namespaces=0 set by the guest's init.
# Each configuration runs the expectations of that configuration
# (tests/kernels/guest_checks.py, as root and as an unprivileged user), then
# once, as the unprivileged user, the escape classes that depend on the kernel
# and the integration tests that exercise each control, and writes gtest JSON. The results page docs/kernels.md is regenerated from them.
#
# Usage: scripts/kernel-matrix.sh [--results DIR] [--no-docs] [config...]
#   --results DIR  also copy every JSON result into DIR (scripts/test.sh's
#                  summary counts *.kernels.json files there)
#   --no-docs      do not rewrite docs/kernels.md
# Environment: CORDON_MATRIX_TIMEOUT (seconds per guest, default 1500: the nouserns guest runs the escape suite against linux-os-sandbox as root and as the user, 650-900 s under TCG on a loaded host),
#   CORDON_MATRIX_ACCEL (tcg, the default, or kvm),
#   CORDON_MATRIX_SUITES (default "checks,escape,integration": what the guests run),
#   CORDON_MATRIX_WHO (default "unprivileged"; "root,unprivileged" runs the suites as both).
# Needs: qemu-system-x86, busybox-static, apt-get download (Debian's archive).
# The kernel package and the initramfs are cached in .cache/kernels/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

results_out=""
write_docs=1
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --results) results_out="$2"; shift 2 ;;
    --no-docs) write_docs=0; shift ;;
    shipped|nolandlock|nouserns) configs+=("$1"); shift ;;
    *) echo "kernel-matrix: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(shipped nolandlock nouserns)
timeout_s="${CORDON_MATRIX_TIMEOUT:-1500}"
accel="${CORDON_MATRIX_ACCEL:-tcg}"
suites="${CORDON_MATRIX_SUITES:-checks,escape,integration}"
who="${CORDON_MATRIX_WHO:-unprivileged}"

[ "$(id -u)" -eq 0 ] || { echo "kernel-matrix: run as root (it installs a setuid-root test helper)" >&2; exit 2; }
for tool in qemu-system-x86_64 busybox apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "kernel-matrix: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
for binary in build/cordon build/src/supervisor/cordon-supervisor build/tests/cordon_escape_tests \
              build/tests/cordon_integration_tests build/tests/escape-probe build/tests/escape-setuid-helper; do
  [ -x "$binary" ] || { echo "kernel-matrix: $binary is missing: build cordon first (scripts/build.sh)" >&2; exit 2; }
done

cache="$root/.cache/kernels"
mkdir -p "$cache"

# --- The kernel: Debian 12's linux-image-amd64 metapackage names the current 6.1 build.
package="$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6/ {print $2; exit}')"
[ -n "$package" ] || { echo "kernel-matrix: apt-cache knows no linux-image-amd64 (apt-get update?)" >&2; exit 2; }
kdir="$cache/$package"
if [ ! -d "$kdir/root/boot" ]; then
  rm -rf "$kdir" && mkdir -p "$kdir"
  (cd "$kdir" && chmod 777 . && apt-get download -q "$package" >/dev/null && dpkg-deb -x ./*.deb root && rm -f ./*.deb)
fi
vmlinuz="$(ls "$kdir"/root/boot/vmlinuz-*)"
kver="${vmlinuz##*/vmlinuz-}"
modules="$kdir/root/lib/modules/$kver/kernel"

# --- The initramfs: busybox and the modules for virtio-9p; its init mounts the
# host's / and hands over to tests/kernels/guest-init.sh on it.
initrd="$kdir/initramfs.cpio"
if [ ! -f "$initrd" ] || [ "$0" -nt "$initrd" ]; then
  staging="$(mktemp -d)"
  mkdir -p "$staging"/{bin,dev,proc,sys,host,modules}
  cp "$(command -v busybox)" "$staging/bin/busybox"
  # Load order follows the modules' depends= fields.
  for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
           drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci net/9p/9pnet net/9p/9pnet_virtio \
           fs/netfs/netfs fs/fscache/fscache fs/9p/9p; do
    cp "$modules/$m.ko" "$staging/modules/"
  done
  cat >"$staging/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p; do
  insmod /modules/$m.ko || echo "initramfs: insmod $m failed"
done
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /host; then
  echo "initramfs: cannot mount the host's root"; poweroff -f
fi
stage2="$(sed -n 's/.*cordon.stage2=\([^ ]*\).*/\1/p' /proc/cmdline)"
umount /dev /proc
exec switch_root /host /bin/bash "$stage2"
INIT
  chmod 755 "$staging/init"
  (cd "$staging" && find . | busybox cpio -o -H newc >"$initrd" 2>/dev/null)
  rm -rf "$staging"
fi

# --- Binaries the guest runs, readable by its unprivileged user (in /tmp: the
# checkout may sit below a directory it cannot enter, like /root); the
# setuid-root helper of the escape suite keeps its mode through the share.
stage="$(mktemp -d /tmp/cordon-matrix-XXXXXX)"
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage" && mkdir -p "$stage/source" "$stage/setuid"
# cordon-supervisor: a filtered run's network broker is that program.
cp build/cordon build/src/supervisor/cordon-supervisor build/tests/cordon_integration_tests \
  build/tests/cordon_escape_tests build/tests/escape-probe build/tests/escape-setuid-helper "$stage/"
cp -r schemas "$stage/source/"
cp tests/kernels/guest-init.sh tests/kernels/guest_checks.py tests/kernels/integration-filter \
  scripts/host-expect.py "$stage/"
install -o root -g root -m 4755 build/tests/escape-setuid-helper "$stage/setuid/escape-setuid-helper"
chmod -R a+rX "$stage"

run_dir="$cache/runs"
rm -rf "$run_dir" && mkdir -p "$run_dir"

boot() {  # boot CONFIG: one guest, its console in $run_dir/CONFIG/console.log
  local config="$1" out="$run_dir/$1" extra=""
  mkdir -p "$out" && chmod 1777 "$out"
  # Debian's CONFIG_LSM (without landlock): the same LSMs in the same order.
  [ "$config" = nolandlock ] && extra="lsm=lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,smack,tomoyo,bpf"
  local started=$SECONDS status=0
  # no_timer_check: on a loaded host, TCG is too slow for the kernel's IO-APIC
  # timer check, which then panics ("IO-APIC + timer doesn't work").
  timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 -accel "$accel" -machine q35 -cpu max -smp 2 -m 2048 \
    -nographic -no-reboot -monitor none -serial "file:$out/console.log" \
    -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1 oops=panic no_timer_check cordon.config=$config cordon.stage2=$stage/guest-init.sh cordon.suites=$suites cordon.who=$who $extra" \
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
    -virtfs "local,path=$out,mount_tag=results,security_model=none" \
    </dev/null >/dev/null 2>"$out/qemu.err" || status=$?
  echo "$((SECONDS - started))" >"$out/seconds"
  [ $status -eq 0 ] || echo "kernel-matrix: guest $config ended with status $status (124: time limit of $timeout_s s)" >&2
  [ -f "$out/done" ] || { echo "kernel-matrix: guest $config did not finish; console:" >&2; tail -n 40 "$out/console.log" >&2; return 1; }
}

overall=0
started=$SECONDS
for config in "${configs[@]}"; do
  echo "== kernel matrix: Debian $kver, $config ($accel)"
  boot "$config" || overall=1
  echo "   $(cat "$run_dir/$config/seconds") s"
done
total=$((SECONDS - started))
echo "== kernel matrix: guests took $total s"

python3 "$root/tests/kernels/matrix_report.py" --runs "$run_dir" --kernel "$kver" --accel "$accel" --seconds "$total" \
  ${results_out:+--results "$results_out"} $([ $write_docs -eq 1 ] && echo --docs "$root/docs/kernels.md") "${configs[@]}" || overall=1
exit $overall
