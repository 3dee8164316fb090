#!/bin/sh
# Prove that the README's set-up works on a machine with nothing installed:
# build a minimal Debian 12 (debootstrap --variant=minbase bookworm) in a
# folder, put a clean clone of HEAD in it, and run, as root in a chroot,
#   1. the commands of the README's "Two commands" block, exactly as written;
#   2. the Dockerfile's RUN lines in its WORKDIR (a second clean clone), then
#      its ENTRYPOINT with --help, so that the Dockerfile and the README share
#      one way to install.
# Prints the duration of every step and the overall result; exit 0 on PASS.
#   scripts/check-fresh.sh                 (as root; `make check-fresh`)
#   scripts/check-fresh.sh --plan          only print what it would run
# Environment:
#   FRESH_ROOT=DIR   where the system goes (default /var/tmp/dctk-fresh.XXXXXX)
#   FRESH_KEEP=1     keep the system afterwards, and reuse it if FRESH_ROOT
#                    already holds one (for debugging; default: a new one)
#   FRESH_MIRROR=URL the Debian mirror (default: the machine's own for bookworm)
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
keep=${FRESH_KEEP:-0}

# The README's block under "## Two commands", comments and blank lines dropped.
readme_cmds=$(awk '/^## /{ sec = ($0 == "## Two commands") } sec && /^```/{ if (in_) exit; in_ = 1; next }
  sec && in_ { sub(/[ \t]*#.*/, ""); if ($0 != "") print }' "$here/README.md")
# The Dockerfile's base, WORKDIR, RUN lines (continuations joined) and ENTRYPOINT.
docker=$(awk '{ if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }' "$here/Dockerfile" |
  grep -E '^(FROM|WORKDIR|RUN|ENTRYPOINT) ')
docker_from=$(echo "$docker" | sed -n 's/^FROM //p')
docker_dir=$(echo "$docker" | sed -n 's/^WORKDIR //p' | tail -n 1)
docker_run=$(echo "$docker" | sed -n 's/^RUN //p')
docker_entry=$(echo "$docker" | sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p')
if [ -z "$readme_cmds" ] || [ "$docker_from" != debian:12 ] || [ -z "$docker_dir" ] ||
   [ -z "$docker_run" ] || [ -z "$docker_entry" ]; then
  echo "check-fresh: cannot read the README's commands or the Dockerfile (FROM debian:12, WORKDIR, RUN, ENTRYPOINT)" >&2
  exit 1
fi

echo "check-fresh: README commands:"; echo "$readme_cmds" | sed 's/^/    /'
echo "check-fresh: Dockerfile FROM $docker_from, RUN in $docker_dir:"; echo "$docker_run" | sed 's/^/    /'
echo "check-fresh: Dockerfile ENTRYPOINT $docker_entry"
[ "${1:-}" = --plan ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "check-fresh: needs root (debootstrap, mount, chroot)" >&2
  exit 1
fi
sh "$here/scripts/install-deps.sh" --fresh

# The machine's configured mirror for bookworm (deb822 .sources or one-line .list).
mirror=${FRESH_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
  /^deb[ \t]/ { u = ""; s = ""; for (i = 2; i <= NF; i++) { if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; continue }
                if (u == "") u = $i; else { s = $i; break } }
                if (s == "bookworm") { print u; exit } }
  /^[ \t]*$/  { if (t && suites ~ /(^| )bookworm( |$)/) { print uri; exit } t = 0; uri = ""; suites = "" }
  /^Types:/   { t = ($0 ~ /[ \t]deb([ \t]|$)/) }
  /^URIs:/    { uri = $2 }
  /^Suites:/  { suites = $0; sub(/^Suites:[ \t]*/, "", suites) }
  END         { if (t && suites ~ /(^| )bookworm( |$)/) print uri }' | head -n 1)}
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

if [ -n "${FRESH_ROOT:-}" ]; then
  root=$FRESH_ROOT
  # it is removed afterwards unless kept: never a folder with something else in it
  if [ "$keep" != 1 ] && [ -d "$root" ] && [ -n "$(ls -A "$root")" ]; then
    echo "check-fresh: FRESH_ROOT=$root is not empty (FRESH_KEEP=1 reuses a kept system)" >&2
    exit 1
  fi
  mkdir -p "$root"
else
  root=$(mktemp -d /var/tmp/dctk-fresh.XXXXXX)
fi
root=$(cd "$root" && pwd)
log=$root.log
: > "$log"

mounted=""
cleanup() {
  status=$?
  set +e
  for m in $mounted; do   # most recent first
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  mounted=""
  if [ "$keep" != 1 ]; then
    if grep -q " $root/" /proc/mounts; then
      echo "check-fresh: $root still has mounts, not removing it" >&2
    else
      rm -rf --one-file-system "$root"
    fi
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s; }
fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
t_all=$(now)
summary=""
# step NAME COMMAND...: run it (output to the terminal and the log), time it.
step() {
  name=$1
  shift
  echo "== check-fresh: $name" | tee -a "$log"
  t0=$(now)
  if { "$@" 2>&1; echo $? > "$root.rc"; } | tee -a "$log"; [ "$(cat "$root.rc")" = 0 ]; then
    r=ok
  else
    r=FAILED
  fi
  rm -f "$root.rc"
  d=$(($(now) - t0))
  line=$(printf '%-46s %8s  %s' "$name" "$(fmt $d)" "$r")
  echo "== check-fresh: $line" | tee -a "$log"
  summary="$summary$line
"
  if [ "$r" != ok ]; then
    finish FAIL || exit 1
  fi
}
finish() {
  echo
  echo "check-fresh: commit $commit, Debian 12 minbase from $mirror in $root (log $log)"
  printf '%s' "$summary"
  echo "check-fresh: $1 in $(fmt $(($(now) - t_all)))"
  [ "$1" = PASS ]
}

# on_root TYPE SOURCE DIR [OPTIONS]: one mount (TYPE bind: a private bind mount),
# recorded for cleanup; a failure ends the run.
on_root() {
  if [ "$1" = bind ]; then
    mount --bind "$2" "$root$3" && mount --make-private "$root$3"
  else
    mount -t "$1" ${4:+-o "$4"} "$2" "$root$3"
  fi || { echo "check-fresh: cannot mount $2 on $root$3" >&2; exit 1; }
  mounted="$root$3 $mounted"
}
mount_all() {
  on_root proc proc /proc
  for d in /sys /dev /dev/pts /dev/shm; do on_root bind "$d" "$d"; done
  on_root tmpfs tmpfs /tmp mode=1777
  host_network
}
# The host's network settings, and nothing else of it: the resolver, proxies,
# and the certificates of a TLS-inspecting proxy (Node.js trusts its own CA
# list only, so npm needs them named; a machine without them needs none).
net_env=""
host_network() {
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    eval "val=\${$v:-}"
    [ -n "$val" ] && net_env="$net_env $v=$val"
  done
  ca=${NODE_EXTRA_CA_CERTS:-}
  if [ -z "$ca" ] && ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    ca=/etc/ssl/certs/ca-certificates.crt
  fi
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    cp -L "$ca" "$root/etc/check-fresh-host-ca.crt"
    net_env="$net_env NODE_EXTRA_CA_CERTS=/etc/check-fresh-host-ca.crt npm_config_cafile=/etc/check-fresh-host-ca.crt"
  fi
}
# in_root DIR COMMAND: a login-like root shell in the chroot, nothing inherited
# but the host's network settings.
in_root() {
  # shellcheck disable=SC2086 # net_env is a list of NAME=VALUE words
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb $net_env \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/sh -c "set -ex; cd $1; $2" < /dev/null
}
# clone_to DIR: a clean clone of the commit (committed files only: no build, no
# node_modules); HEAD when the run started, for both clones.
commit=$(git -C "$here" rev-parse HEAD)
clone_to() {
  rm -rf "$root$1"
  git clone -q --no-checkout "$here" "$root$1" && git -C "$root$1" checkout -q --detach "$commit"
}

if [ "$keep" = 1 ] && [ -x "$root/bin/sh" ]; then
  echo "check-fresh: reusing the system in $root (FRESH_KEEP=1)"
else
  step "debootstrap --variant=minbase bookworm" debootstrap --variant=minbase bookworm "$root" "$mirror"
fi
mount_all
step "clone HEAD into /root/dc_toolkit" clone_to /root/dc_toolkit
echo "$readme_cmds" > "$root/tmp/readme.cmds"
while IFS= read -r c; do
  step "README: $c" in_root /root/dc_toolkit "$c"
done < "$root/tmp/readme.cmds"
step "clone HEAD into $docker_dir (Dockerfile COPY)" clone_to "$docker_dir"
echo "$docker_run" > "$root/tmp/docker.cmds"
while IFS= read -r c; do
  step "Dockerfile RUN $c" in_root "$docker_dir" "$c"
done < "$root/tmp/docker.cmds"
step "Dockerfile ENTRYPOINT $docker_entry --help" in_root / "command -v $docker_entry && $docker_entry --help"
finish PASS
