# shellcheck shell=bash
# `infra/lab fresh-root [--stage packages|up|test|all] [--keep] [--rebuild]`: the install steps of
# this checkout checked on a fresh Debian 12 machine that has nothing but git, made here.
#
#   - a `debootstrap --variant=minbase bookworm` root from this machine's own mirror, made once and
#     cached as a tarball (debian_minbase_tar in common.sh: var/cache/debian/, shared with the
#     container lab's base images); every run unpacks a new copy under var/freshroot/<run>/root;
#   - git (and ca-certificates, which a clone over https needs) installed into it, nothing more;
#   - the checkout's committed HEAD cloned into it (/root/sutlab) with that git: uncommitted files
#     are not there, as on any machine that clones the repository;
#   - each stage run inside it, made the root of a private mount namespace (pivot_root, a chroot
#     that container runtimes use) in a private PID namespace (unshare): whatever
#     a stage starts dies with the stage, and the root's mounts (/proc, /sys, /dev, /run ...) exist
#     only in that namespace, so removing the root never reaches through one of them.
#
# Stages: packages (the project's own install functions, as `infra/lab up`, `up --containers` and
# `test` call them, then every command of LAB_CMDS, TOOL_CMDS, LAB_OPTION_CMDS, CONTAINER_CMDS, TEST_CMDS and
# every module of TOOL_PY_MODULES checked, then tests/integration/infra/test_pkglists.py), up (`infra/lab
# up` and `up --tls` on free ports, every URL they print fetched, status, down; then the commands of
# the first screen of README.md as tests/integration/infra/test_readme.py runs them, and `loadscripts/case
# count-pagination --duration 3` after up), test (`.ci/run`).
# Sourced by infra/lab after common.sh; uses its ROOT. Nothing here runs on its own.

FR_RELEASE=bookworm
FR_TAR=$ROOT/var/cache/debian/debian-$FR_RELEASE-minbase.tar
FR_HOME=$ROOT/var/freshroot
# The .debs apt downloads inside the roots, kept between runs (bind-mounted over the root's
# /var/cache/apt/archives): a new root installs the same packages without fetching them again.
FR_APT=$ROOT/var/cache/freshroot-apt
FR_CLONE=/root/sutlab
FR_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
FR_DIR='' FR_ROOTFS='' FR_PID='' FR_KEEP=0 FR_T0=0

fr_usage() {
  cat <<'EOF'
usage: infra/lab fresh-root [--stage packages|up|test|all] [--keep] [--rebuild]

Checks the install steps on a fresh Debian 12 (bookworm) root that has nothing but git: a
debootstrap minbase root (made once from this machine's mirror, cached in var/cache/debian/), unpacked
anew under var/freshroot/<run>/root, the checkout's committed HEAD cloned into /root/sutlab; each
stage runs there (pivot_root) in a private PID and mount namespace (root only).

  --stage packages  install what infra/lab up, up --containers and test install, as they do; check
                    that every program and Python module of the lists in infra/lib/common.sh is
                    there ("missing: CMD (needed by PART; package: PKG)")
  --stage up        infra/lab up, then up --tls, on free ports; fetch every URL; status; down
  --stage test      bash .ci/run (infra/lab test, about 30 minutes and more); its log in var/freshroot/
  --stage all       the three, in that order, in one root (default)
  --keep            leave the root in var/freshroot/<run>/root for inspection
  --rebuild         run debootstrap again instead of using the cached root

Exit status: 0 if every stage run passed, 1 if one failed, 2 on a usage error.
EOF
}

fr_say() { printf 'fresh-root: %s\n' "$*"; }

# fr_phase_done NAME T0 [STATUS]: the progress line of a phase, with its seconds.
fr_phase_done() {
  local name=$1 t0=$2 st=${3:-ok}
  printf 'fresh-root: %-52s %-6s %5s s   (total %s s)\n' "$name" "$st" "$((SECONDS - t0))" "$((SECONDS - FR_T0))"
}

# ---- the root ---------------------------------------------------------------------------------------

# fr_new_dir: var/freshroot/<date-time>[-N]/ for this run (logs, the root in root/).
fr_new_dir() {
  local base d n=1
  base=$FR_HOME/$(date +%Y%m%d-%H%M%S)
  d=$base
  while [ -e "$d" ]; do n=$((n + 1)); d=$base-$n; done
  mkdir -p "$d"
  FR_DIR=$d FR_ROOTFS=$d/root
}

# fr_unpack: a new copy of the cached minbase root, made a machine: a copy of this machine's
# /etc/resolv.conf, the /etc/hosts every installed Debian has (debootstrap writes none), and a
# policy-rc.d that forbids starting services.
fr_unpack() {
  mkdir -p "$FR_ROOTFS"
  tar -C "$FR_ROOTFS" --numeric-owner -xpf "$FR_TAR"
  chmod 755 "$FR_ROOTFS"   # a tarball made before debian_minbase_tar said so has / at 700
  rm -f "$FR_ROOTFS/etc/resolv.conf"
  cat /etc/resolv.conf > "$FR_ROOTFS/etc/resolv.conf"
  printf 'sutlab-fresh\n' > "$FR_ROOTFS/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\tsutlab-fresh\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    > "$FR_ROOTFS/etc/hosts"
  # invoke-rc.d asks policy-rc.d before a package's postinst starts its service; 101 = forbidden.
  # Without it, installing postgresql-15, redis-server, nginx or haproxy would start the system
  # daemons inside the root (no systemd there: their init scripts), on their default ports in
  # this machine's network namespace, which the root shares: they would clash with the host's own
  # services, and the lab never uses them (it runs its own, under var/).
  cat > "$FR_ROOTFS/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
# written by infra/lab fresh-root: no package starts its service in this root
exit 101
EOF
  chmod 755 "$FR_ROOTFS/usr/sbin/policy-rc.d"
  chmod 1777 "$FR_ROOTFS/tmp"
  # This machine's own certificate authorities (/usr/local/share/ca-certificates: a proxy that
  # intercepts TLS, in a sandbox), as its resolv.conf: how this machine reaches the network, not
  # something the project installs. ca-certificates (installed with git) adds them to the root's store.
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$FR_ROOTFS/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$FR_ROOTFS/usr/local/share/ca-certificates/"
  fi
  mkdir -p "$FR_APT/partial" "$FR_ROOTFS/mnt/checkout" "$FR_ROOTFS/mnt/oldroot"
  # apt downloads as its user _apt (its uid in the root) into partial/
  chown "$(awk -F: '$1 == "_apt" { print $3 }' "$FR_ROOTFS/etc/passwd"):0" "$FR_APT/partial"
  chmod 700 "$FR_APT/partial"
}

# The first process of the namespaces (PID 1): the root's mounts as a machine has them, the root
# made the root of the mount namespace (pivot_root, as a container runtime does; this machine's
# filesystem is then detached from the namespace), and the stage's script started there and waited
# for (PID 1 reaps the orphans daemons leave). When it exits, the kernel kills everything left in
# the PID namespace and drops its mounts. Not a plain chroot: there the namespace's root stays this
# machine's /, and `podman exec` (runc joins a container's mount namespace with setns, which puts
# the process at the namespace's root) would run its command in this machine's filesystem
# ("chdir to cwd ("/data") set in config.json failed"); and podman's storage needs / to be a mount
# point ("remount /, flags: 0x44000: invalid argument"). /dev is devtmpfs (the kernel's one
# instance, as on any machine), with its own devpts instance; /run and /dev/shm are new tmpfs; /tmp
# stays the root's own directory (Debian 12 keeps /tmp on the root filesystem); /sys/fs/cgroup is
# this machine's (podman needs the cgroups).
# Arguments: ROOTFS APTCACHE CHECKOUT SCRIPT [VAR=VALUE...] (CHECKOUT: bound read-only on
# /mnt/checkout, for the clone only; '' for none).
# shellcheck disable=SC2016  # expanded by that bash
FR_NS_INIT='
set -eu
r=$1 apt=$2 checkout=$3 script=$4
shift 4
mount --bind "$r" "$r"
mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
mount -t sysfs -o nosuid,nodev,noexec sysfs "$r/sys"
mount --rbind /sys/fs/cgroup "$r/sys/fs/cgroup"
mount -t devtmpfs -o nosuid,mode=755 devtmpfs "$r/dev"
mount -t devpts -o newinstance,nosuid,noexec,gid=5,mode=620,ptmxmode=0666 devpts "$r/dev/pts"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$r/dev/shm"
mount -t tmpfs -o nosuid,nodev,mode=755 tmpfs "$r/run"
mkdir -m 1777 "$r/run/lock"
mount --bind "$apt" "$r/var/cache/apt/archives"
if [ -n "$checkout" ]; then
  mount --bind "$checkout" "$r/mnt/checkout"
  mount -o remount,bind,ro "$r/mnt/checkout"
fi
cd "$r"
pivot_root . mnt/oldroot
umount -l /mnt/oldroot
cd /
set +e
/usr/bin/env -i PATH="$FR_PATH" HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
  LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@" /bin/bash -c "$script" fresh-root </dev/null
'

# The start of every stage script: its report lines go to the stage log and to fd 3 (this
# terminal); the project's common.sh once the clone is there.
# shellcheck disable=SC2016  # expanded by the bash in the root
FR_PRELUDE='
set -euo pipefail
report() { printf "%s\n" "$*"; printf "%s\n" "$*" >&3; }
if [ -f /root/sutlab/infra/lib/common.sh ]; then
  cd /root/sutlab
  ROOT=/root/sutlab
  . infra/lib/common.sh
fi
'

# fr_in_root LOG SCRIPT [VAR=VALUE...]: SCRIPT (bash, after FR_PRELUDE) run as root inside the root,
# in new PID and mount namespaces, with VAR=VALUE in its environment; output appended to LOG, its
# report lines on stdout too. Returns SCRIPT's status.
fr_in_root() {
  local log=$1 script=$2 rc=0
  shift 2
  printf '\n===== %s %s\n' "$(date '+%F %T')" "${script:0:200}" >> "$log"
  FR_PATH=$FR_PATH unshare --pid --fork --kill-child --mount-proc --mount --propagation private \
    bash -c "$FR_NS_INIT" fr-init "$FR_ROOTFS" "$FR_APT" "${FR_CHECKOUT:-}" "$FR_PRELUDE$script" "$@" \
    3>&1 >>"$log" 2>&1 </dev/null &
  FR_PID=$!
  wait "$FR_PID" || rc=$?
  FR_PID=''
  return "$rc"
}

# fr_procs_inside: pids of processes whose root directory is the fresh root.
fr_procs_inside() {
  local d
  [ -d "$FR_ROOTFS" ] || return 0
  for d in /proc/[0-9]*; do
    [ "$d/root" -ef "$FR_ROOTFS" ] 2>/dev/null && printf '%s\n' "${d#/proc/}"
  done
  return 0
}

# fr_cleanup: at exit, the stage still running stopped (SIGKILL to our unshare, which blocks SIGTERM
# while it waits; --kill-child then kills the namespace's first process, and the kernel the rest),
# then the root removed unless --keep: only once nothing runs in it and nothing is mounted below
# it (rm_tree checks with findmnt), never through a mount.
fr_cleanup() {
  local rc=$? n=100
  trap - EXIT INT TERM
  set +e
  if [ -n "$FR_PID" ] && kill -0 "$FR_PID" 2>/dev/null; then
    kill -KILL "$FR_PID" 2>/dev/null
    wait "$FR_PID" 2>/dev/null
  fi
  while [ -n "$(fr_procs_inside)" ] && [ "$n" -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
  if [ -n "$FR_ROOTFS" ] && [ -d "$FR_ROOTFS" ]; then
    if [ "$FR_KEEP" = 1 ]; then
      fr_say "root kept in ${FR_ROOTFS#"$ROOT"/} (enter: unshare --pid --fork --mount-proc chroot $FR_ROOTFS /bin/bash; remove: rm -rf --one-file-system $FR_ROOTFS once nothing is mounted below it)"
    elif [ -n "$(fr_procs_inside)" ]; then
      fr_say "not removing ${FR_ROOTFS#"$ROOT"/}: processes still run in it: $(fr_procs_inside | tr '\n' ' ')"
    elif (rm_tree "$FR_ROOTFS"); then
      fr_say "root removed (logs kept in ${FR_DIR#"$ROOT"/}/)"
    else
      fr_say "could not remove ${FR_ROOTFS#"$ROOT"/}: see above"
    fi
  fi
  exit "$rc"
}

# ---- phases -----------------------------------------------------------------------------------------

# fr_make_root: the cached minbase tarball (debootstrap once), unpacked anew; git installed; the clone.
fr_make_root() {
  local t head dirty
  t=$SECONDS
  [ -s "$FR_TAR" ] && [ "$1" = 0 ] && fr_phase_done "debootstrap (cached: ${FR_TAR#"$ROOT"/})" "$t"
  if [ "$1" = 1 ] || [ ! -s "$FR_TAR" ]; then
    rm -f "$FR_TAR"
    ( debian_minbase_tar "$FR_RELEASE" "$FR_TAR" ) >> "$FR_DIR/debootstrap.log" 2>&1 ||
      { tail -n 20 "$FR_DIR/debootstrap.log"; die "fresh-root: debootstrap failed (log: $FR_DIR/debootstrap.log)"; }
    fr_phase_done "debootstrap --variant=minbase $FR_RELEASE" "$t"
  fi
  t=$SECONDS
  fr_unpack
  fr_phase_done "unpack into ${FR_ROOTFS#"$ROOT"/}" "$t"
  t=$SECONDS
  fr_in_root "$FR_DIR/git.log" '
    apt-get update
    apt-get install -y --no-install-recommends git ca-certificates' ||
    { tail -n 20 "$FR_DIR/git.log"; die "fresh-root: installing git failed (log: $FR_DIR/git.log)"; }
  fr_phase_done "apt-get install git ca-certificates" "$t"
  t=$SECONDS
  head=$(git -C "$ROOT" rev-parse HEAD)
  dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no | wc -l)
  # shellcheck disable=SC2016  # expanded in the root
  FR_CHECKOUT=$ROOT fr_in_root "$FR_DIR/git.log" '
    git clone --quiet --no-hardlinks /mnt/checkout /root/sutlab
    git -C /root/sutlab checkout --quiet --detach "$FR_HEAD"' FR_HEAD="$head" ||
    { tail -n 20 "$FR_DIR/git.log"; die "fresh-root: git clone failed (log: $FR_DIR/git.log)"; }
  fr_phase_done "git clone of HEAD ${head:0:12}" "$t"
  [ "$dirty" = 0 ] || fr_say "($dirty changed files of the checkout are not committed: the root does not see them)"
}

# The packages stage: what `infra/lab up`, `up --containers` and `test` install, in that order and as
# they install it (ensure_pkgs, the lists and npm_pkgs of the clone's common.sh), each part's
# commands checked right after its install; then the test of the lists against dpkg's records,
# which finds a command that one part's packages bring only because another part's were installed
# first.
# shellcheck disable=SC2016  # expanded in the root
FR_STAGE_PACKAGES='
gaps=0
part() {  # part NAME MISSING: report each missing line
  if [ -n "$2" ]; then
    while IFS= read -r l; do report "missing: $l"; done <<<"$2"
    gaps=$((gaps + $(printf "%s\n" "$2" | wc -l)))
  fi
}
t=$SECONDS
ensure_pkgs "${LAB_PKGS[@]}" "${TOOL_PKGS[@]}" 3>&-
report "  installed LAB_PKGS TOOL_PKGS (infra/lab up): $((SECONDS - t)) s"
part lab "$(missing_cmds lab "${LAB_CMDS[@]}")"
part tools "$(missing_cmds tools "${TOOL_CMDS[@]}")"
part tools "$(missing_py_modules tools import "${TOOL_PY_MODULES[@]}")"
t=$SECONDS
mapfile -t opt < <(for e in "${LAB_OPTION_CMDS[@]}"; do printf "%s\n" "${e##*:}"; done | sort -u)
ensure_pkgs "${opt[@]}" 3>&-
report "  installed ${opt[*]} (the options of infra/lab up): $((SECONDS - t)) s"
part lab "$(missing_cmds lab "${LAB_OPTION_CMDS[@]}")"
t=$SECONDS
ensure_pkgs "${CONTAINER_PKGS[@]}" 3>&-
report "  installed CONTAINER_PKGS (infra/lab up --containers): $((SECONDS - t)) s"
part containers "$(missing_cmds containers "${CONTAINER_CMDS[@]}")"
t=$SECONDS
mapfile -t npm_pkg < <(npm_pkgs)
ensure_pkgs "${LAB_PKGS[@]}" "${TEST_PKGS[@]}" "${npm_pkg[@]}" 3>&-
report "  installed TEST_PKGS ${npm_pkg[*]} (infra/lab test): $((SECONDS - t)) s"
part test "$(missing_cmds test "${TEST_CMDS[@]}")"
report "  $(dpkg-query -W -f="\${Status}\n" | grep -c " installed$") packages installed in the root"
if [ -f tests/integration/infra/test_pkglists.py ]; then
  if /usr/bin/python3 tests/integration/infra/test_pkglists.py 3>&- >/tmp/test_pkglists.out 2>&1; then
    report "  tests/integration/infra/test_pkglists.py: ok (every command comes from the packages of its own part)"
  else
    cat /tmp/test_pkglists.out
    grep -E "^(AssertionError|FAIL|ERROR|    )" /tmp/test_pkglists.out | head -n 20 | while IFS= read -r l; do report "  $l"; done
    report "  tests/integration/infra/test_pkglists.py: FAILED"
    gaps=$((gaps + 1))
  fi
fi
[ "$gaps" = 0 ] || { report "  $gaps gap(s)"; exit 1; }
'

# The up stage: infra/lab up as README.md gives it, on free ports (the root shares this machine's
# network namespace: the default ports may be taken here), every URL it printed fetched, and the
# endpoints of both apps; then up --tls and its HTTPS URL; status; down.
# shellcheck disable=SC2016  # expanded in the root
FR_STAGE_UP='
fails=0
fetch() {  # fetch URL [CURL ARGS...]: GET, reported with its status
  local url=$1 code
  shift
  code=$(curl -sS -o /dev/null -w "%{http_code}" --max-time 10 "$@" "$url" 2>&1) || true
  case $code in 2??) report "  GET $url -> $code" ;; *) report "  GET $url -> $code  FAILED"; fails=$((fails + 1)) ;; esac
}
t=$SECONDS
if ! bash infra/lab up 3>&- > /tmp/up.out 2>&1; then
  cat /tmp/up.out; tail -n 15 /tmp/up.out | while IFS= read -r l; do report "  | $l"; done
  report "  infra/lab up FAILED ($((SECONDS - t)) s)"; exit 1
fi
cat /tmp/up.out
report "  infra/lab up: ok ($((SECONDS - t)) s)"
base=http://127.0.0.1:$SUTLAB_LAB_PORT
mapfile -t urls < <({ grep -oE "http://127\.0\.0\.1:$SUTLAB_LAB_PORT/[^ )]*" /tmp/up.out
  for p in /health_check /readyz /status.txt /metrics /api/articles /api/tags /stores/categories; do echo "$base$p"; done; } | awk "!seen[\$0]++")
for u in "${urls[@]}"; do fetch "$u"; done
t=$SECONDS
if bash infra/lab up --tls 3>&- > /tmp/up-tls.out 2>&1; then
  cat /tmp/up-tls.out
  report "  infra/lab up --tls: ok ($((SECONDS - t)) s)"
  fetch "https://127.0.0.1:$SUTLAB_LAB_TLS_PORT/health_check" --cacert var/tls/cert.pem
  fetch "https://127.0.0.1:$SUTLAB_LAB_TLS_PORT/api/articles" --http2 --cacert var/tls/cert.pem
else
  cat /tmp/up-tls.out; tail -n 15 /tmp/up-tls.out | while IFS= read -r l; do report "  | $l"; done
  report "  infra/lab up --tls FAILED"; fails=$((fails + 1))
fi
if bash infra/lab status 3>&- > /tmp/status.out 2>&1; then
  while IFS= read -r l; do report "  status | $l"; done < /tmp/status.out
else
  cat /tmp/status.out; report "  infra/lab status FAILED"; fails=$((fails + 1))
fi
if bash infra/lab down 3>&- > /tmp/down.out 2>&1; then
  cat /tmp/down.out; report "  infra/lab down: $(tail -n 1 /tmp/down.out)"
else
  cat /tmp/down.out; report "  infra/lab down FAILED"; fails=$((fails + 1))
fi
for p in "$SUTLAB_LAB_PORT" "$SUTLAB_LAB_TLS_PORT" "$SUTLAB_LAB_PG_PORT" "$SUTLAB_LAB_REDIS_PORT"; do
  if port_in_use "$p"; then report "  port $p still answers after down  FAILED"; fails=$((fails + 1)); fi
done
# the commands of the first screen of README.md, read from it and run in order on a lab of their own
t=$SECONDS
if SUTLAB_BIN=$PWD/build/sutlab /usr/bin/python3 tests/integration/infra/test_readme.py -v 3>&- > /tmp/readme.out 2>&1; then
  cat /tmp/readme.out; grep "^\$ " /tmp/readme.out | while IFS= read -r l; do report "  readme | $l"; done
  report "  the README first screen: ok ($((SECONDS - t)) s)"
else
  cat /tmp/readme.out; tail -n 15 /tmp/readme.out | while IFS= read -r l; do report "  | $l"; done
  report "  the README first screen FAILED"; fails=$((fails + 1))
fi
# a case, as a user runs it after up: its tables and its verdict line (exit 1 is a verdict: partly
# or not reproduced; what fails here is a case that did not run to its verdict)
t=$SECONDS
bash infra/lab up 3>&- > /tmp/up2.out 2>&1 || { cat /tmp/up2.out; report "  infra/lab up (for the case) FAILED"; fails=$((fails + 1)); }
loadscripts/case count-pagination --duration 3 3>&- > /tmp/case.out 2>&1 || true
cat /tmp/case.out
if v=$(grep -m1 "^verdict: " /tmp/case.out); then
  report "  loadscripts/case count-pagination --duration 3: ran to its tables ($((SECONDS - t)) s): ${v:0:100}"
else
  tail -n 15 /tmp/case.out | while IFS= read -r l; do report "  | $l"; done
  report "  loadscripts/case count-pagination --duration 3 FAILED (no verdict line)"; fails=$((fails + 1))
fi
bash infra/lab down 3>&- > /dev/null 2>&1 || true
[ "$fails" = 0 ]
'

# The test stage: the CI entry point, as CI runs it (root, CI=true, no stdin). Its last line is
# infra/lab test's "N passed, M failed"; each failed test is named from the meson logs.
# shellcheck disable=SC2016  # expanded in the root
FR_STAGE_TEST='
t=$SECONDS
set +e
bash .ci/run 3>&-
rc=$?
set -e
report "  bash .ci/run exited $rc after $((SECONDS - t)) s"
/usr/bin/python3 - build-* <<"PY" | while IFS= read -r l; do report "  $l"; done
import glob, json, os, sys
for tree in sys.argv[1:]:
    for path in sorted(glob.glob(os.path.join(tree, "meson-logs", "testlog*.json"))):
        for line in open(path, encoding="utf-8"):
            try:
                t = json.loads(line)
            except ValueError:
                continue
            if t.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP"):
                print("failed: %s %s (%s, %.0f s)" % (tree, t.get("name"), t.get("result"), t.get("duration", 0)))
PY
exit "$rc"
'

# fr_free_port USED...: a loopback port from 20000-32767 (below the ephemeral range, as the lab's
# own defaults are) that nothing listens on and that is none of USED.
fr_free_port() {
  local p x ok n=0
  while [ "$n" -lt 200 ]; do
    n=$((n + 1))
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    ok=1
    for x in "$@"; do [ "$x" = "$p" ] && ok=0; done
    [ "$ok" = 1 ] && ! port_in_use "$p" && { printf '%s\n' "$p"; return 0; }
  done
  die "fresh-root: no free port"
}

# fr_stage NAME: one stage, its output in var/freshroot/<run>/NAME.log; 0 if it passed.
fr_stage() {
  local name=$1 t=$SECONDS log=$FR_DIR/$1.log rc=0 ports p
  step "fresh-root: stage $name (log: ${log#"$ROOT"/})"
  case $name in
    packages)
      fr_in_root "$log" "$FR_STAGE_PACKAGES" || rc=$?
      fr_say "  the root now takes $(du -sxm "$FR_ROOTFS" | cut -f1) MB" ;;
    up)
      # the lab's defaults (8080, 8081, 8443, 18080, 25432, 26379) stay free for the host's own lab
      ports=(8080 8081 8443 18080 25432 26379)
      for p in PORT PG_PORT REDIS_PORT TLS_PORT CONTAINER_PORT; do
        ports+=("$(fr_free_port "${ports[@]}")")
        printf -v "FR_$p" '%s' "${ports[${#ports[@]} - 1]}"
      done
      fr_in_root "$log" "$FR_STAGE_UP" SUTLAB_LAB_PORT="$FR_PORT" SUTLAB_LAB_PG_PORT="$FR_PG_PORT" \
        SUTLAB_LAB_REDIS_PORT="$FR_REDIS_PORT" SUTLAB_LAB_TLS_PORT="$FR_TLS_PORT" \
        SUTLAB_LAB_CONTAINER_PORT="$FR_CONTAINER_PORT" || rc=$? ;;
    test)
      fr_in_root "$log" "$FR_STAGE_TEST" CI=true || rc=$?
      # the meson logs and the lab's logs (image builds), for after the root is gone
      for p in "$FR_ROOTFS$FR_CLONE"/build-*/meson-logs; do
        [ -d "$p" ] && mkdir -p "$FR_DIR/meson-logs" && cp -r "$p" "$FR_DIR/meson-logs/$(basename "$(dirname "$p")")"
      done
      [ -d "$FR_ROOTFS$FR_CLONE/var/log" ] && cp -r "$FR_ROOTFS$FR_CLONE/var/log" "$FR_DIR/lab-log"
      p=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
      fr_say "test: ${p:-no \"N passed, M failed\" line (see the log)}"
      [ -n "$p" ] || rc=1 ;;
  esac
  if [ "$rc" = 0 ]; then
    fr_phase_done "stage $name" "$t"
  else
    fr_phase_done "stage $name" "$t" FAILED
    fr_say "stage $name failed (exit $rc): see ${log#"$ROOT"/}"
  fi
  return "$rc"
}

cmd_fresh_root() {
  local stage=all keep=0 rebuild=0 stages s failed=()
  while [ "$#" -gt 0 ]; do
    case $1 in
      --stage) [ "$#" -ge 2 ] || { printf 'infra/lab fresh-root: --stage needs a value (packages, up, test or all)\n' >&2; exit 2; }
               stage=$2; shift 2 ;;
      --stage=*) stage=${1#--stage=}; shift ;;
      --keep) keep=1; shift ;;
      --rebuild) rebuild=1; shift ;;
      -h|--help) fr_usage; exit 0 ;;
      *) printf 'infra/lab fresh-root: unknown argument %s (infra/lab fresh-root --help)\n' "$1" >&2; exit 2 ;;
    esac
  done
  case $stage in
    packages|up|test) stages=("$stage") ;;
    all) stages=(packages up test) ;;
    *) printf 'infra/lab fresh-root: --stage is packages, up, test or all, not "%s"\n' "$stage" >&2; exit 2 ;;
  esac
  is_root || die "infra/lab fresh-root needs root (debootstrap, unshare, mount, pivot_root)"
  ensure_pkgs debootstrap
  for s in unshare pivot_root findmnt mount umount tar git; do
    command -v "$s" >/dev/null 2>&1 || die "fresh-root needs $s on this machine"
  done
  FR_KEEP=$keep FR_T0=$SECONDS
  fr_new_dir
  trap fr_cleanup EXIT
  trap 'fr_say "interrupted (SIGINT)"; exit 130' INT
  trap 'fr_say "interrupted (SIGTERM)"; exit 143' TERM
  fr_say "run ${FR_DIR#"$ROOT"/}: stages ${stages[*]}, Debian $FR_RELEASE from $(debian_mirror "$FR_RELEASE")"
  fr_make_root "$rebuild"
  for s in "${stages[@]}"; do
    fr_stage "$s" || failed+=("$s")
  done
  if [ "${#failed[@]}" -gt 0 ]; then
    fr_say "FAILED: ${failed[*]} (of ${stages[*]}) in $((SECONDS - FR_T0)) s; logs in ${FR_DIR#"$ROOT"/}/"
    exit 1
  fi
  fr_say "passed: ${stages[*]} in $((SECONDS - FR_T0)) s; logs in ${FR_DIR#"$ROOT"/}/"
}
