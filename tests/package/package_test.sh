#!/usr/bin/env bash
# The Debian package on a fresh Debian 12: builds kbench_<version>_amd64.deb (host target only:
# Debian's archive has no CUDA 13 toolkit), installs it with apt into a clean minbase bookworm root
# (debootstrap, from Debian's mirror), and from that root runs `kbench list` and a host eval of the
# softmax problem's honest solution, which must PASS, and of an exploit, which must FAIL.
#   usage: package_test.sh SOURCE_DIR WORK_DIR [COMPILER_LAUNCHER]
# Needs root (debootstrap, apt in the root) and the network to Debian's mirror; exits 77 (reported
# as skipped) without root. The minbase root is cached as a tarball under the kbench cache
# ($KBENCH_CACHE_DIR or ~/.cache/kbench/package-test), rebuilt when older than 7 days; every run
# unpacks a fresh copy of it, so nothing one run installs is seen by the next.
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
launcher=${3:-}
suite=bookworm
mirror=${KBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: the package test needs root (debootstrap, apt-get inside the clean root)"
  exit 77
fi
for tool in debootstrap bwrap cpack dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package test: $tool is missing (scripts/setup --package installs it)" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
step() { echo "== $(date -u +%H:%M:%S) $*"; }

# 1. The package, from a build of its own (host target, no tests): incremental across runs.
# Optimized without debug information, as Debian ships binaries (dh_strip moves debug info out of
# the package), and a unity build as scripts/setup configures: the cheapest full build, which matters
# on CI's two cores, where this build runs beside the test suite.
step "building the package"
build=$work/build
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DKBENCH_UNITY_BUILD=ON \
    "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" -DKBENCH_CUDA=OFF -DKBENCH_BUILD_TESTS=OFF \
    ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher -DCMAKE_C_COMPILER_LAUNCHER=$launcher} >/dev/null
fi
cmake --build "$build" --parallel "${KBENCH_JOBS:-$(nproc)}" >/dev/null
rm -f "$build"/kbench_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/kbench_*_amd64.deb)
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
dpkg-deb --field "$deb" Package Version Architecture Depends
# The deb holds the FHS layout (cmake/KbenchInstall.cmake).
contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/kbench ./usr/share/kbench/problems/softmax/problem.toml ./usr/share/kbench/hardware/ \
         ./usr/share/kbench/prices/models.toml ./usr/include/kbench/solution.h ./usr/share/doc/kbench/README.md \
         ./usr/share/bash-completion/completions/kbench ./usr/share/zsh/vendor-completions/_kbench; do
  grep -q " $f" <<<"$contents" || { echo "package test: $f is not in $(basename "$deb")" >&2; exit 1; }
done

# 2. A clean Debian 12 root: minbase, from the cache when it is fresh.
cache=${KBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kbench}/package-test
tarball=$cache/$suite-minbase-amd64.tar
mkdir -p "$cache"
if [ -z "$(find "$tarball" -mtime -7 2>/dev/null)" ]; then
  step "debootstrap --variant=minbase $suite from $mirror"
  fresh=$(mktemp -d "$cache/root.XXXXXX")
  debootstrap --variant=minbase "$suite" "$fresh/root" "$mirror" >"$fresh/debootstrap.log" 2>&1 ||
    { tail -20 "$fresh/debootstrap.log" >&2; rm -rf "$fresh"; exit 1; }
  tar -C "$fresh/root" -cf "$fresh/root.tar" .
  mv -f "$fresh/root.tar" "$tarball"   # atomic: a concurrent run reads the old or the new one whole
  rm -rf "$fresh"
fi
root=$work/root
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
cp "$deb" "$root/root/"

# The root runs in a bwrap container, not a chroot: kbench's own sandboxes (bwrap) need user
# namespaces, which the kernel refuses to a chrooted process. As root here, the container keeps
# root's capabilities, which apt needs; the network is the machine's (the mirror).
# /proc is the machine's, bound, not a new one: bwrap covers parts of a /proc it mounts itself
# (/proc/sys and others, read-only), and the kernel refuses a nested sandbox (kbench's own, in its
# user namespace) a proc mount while another proc in its mount namespace is partly covered
# ("Can't mount proc on /newroot/proc: Operation not permitted"). So no PID namespace here either.
# /tmp is world-writable with the sticky bit, as on a real system: apt's key check writes there
# as its own user.
in_root() {
  bwrap --bind "$root" / --dev /dev --bind /proc /proc --perms 1777 --tmpfs /tmp \
    --ro-bind /etc/resolv.conf /etc/resolv.conf \
    --unshare-ipc --unshare-uts --die-with-parent --chdir /root --clearenv \
    --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --setenv HOME /root \
    --setenv LANG C.UTF-8 --setenv DEBIAN_FRONTEND noninteractive -- /bin/sh -c "$1"
}

# 3. Install it with its dependencies, as a user would: apt resolves the declared Depends.
step "apt-get install ./$(basename "$deb") in the clean root"
in_root "apt-get -o Acquire::Retries=3 update -qq && \
         apt-get -o Acquire::Retries=3 install -y -qq --no-install-recommends ./$(basename "$deb") >/root/apt.log 2>&1 || \
         { tail -30 /root/apt.log; exit 1; }"

# 4. Run it from there. No source tree exists in the root: the deck comes from /usr/share/kbench.
step "kbench list"
out=$(in_root "kbench list")
echo "$out" | head -5
grep -q '^softmax' <<<"$out" || { echo "package test: 'kbench list' in the root does not list softmax" >&2; exit 1; }
step "kbench eval softmax (honest host solution)"
in_root "kbench eval softmax /usr/share/kbench/problems/softmax/solutions/host-fast --target host --out /root/honest" |
  tee "$work/eval-honest.txt" | tail -6
grep -q 'verdict PASS' "$work/eval-honest.txt" || { echo "package test: the honest host solution did not PASS" >&2; exit 1; }
step "kbench eval softmax (an exploit, must FAIL)"
rc=0
in_root "kbench check softmax /usr/share/kbench/problems/softmax/solutions/exploit-host-constant --target host" \
  >"$work/check-exploit.txt" 2>&1 || rc=$?
tail -4 "$work/check-exploit.txt"
[ "$rc" -eq 1 ] || { echo "package test: the exploit's check exited $rc, not 1 (FAIL)" >&2; exit 1; }
step "done"
