# shellcheck shell=bash
# Helpers shared by infra/lab and loadscripts/sutlab_lab/services/with-services.
# Source it after setting ROOT (the repository top). Nothing here runs on its own.

PG_BIN=/usr/lib/postgresql/15/bin

# Debian packages that `infra/lab up` needs (build + runtime) and the extra ones `infra/lab test` needs.
# shellcheck disable=SC2034  # used by infra/lab
LAB_PKGS=(build-essential meson ninja-build pkg-config libh2o-evloop-dev libssl-dev zlib1g-dev
          libuv1-dev libpq-dev libhiredis-dev libjansson-dev libcrypt-dev check
          postgresql-15 postgresql-client-15 redis-server curl ca-certificates)
# What the tools of loadscripts/ (steps, flip, spray, case, plot, soak, bench) run and import beyond
# LAB_PKGS: `infra/lab up` installs these too, so the tools work after `up` alone. The load
# generators (wrk, ab, hey, httperf, Locust), matplotlib for the PNGs, jinja2 and markdown for
# report.html (htmlreport.py), prometheus_client's parser for /metrics (services/metrics.py),
# psutil for process trees and their CPU (services/procs.py, tiers.py). procps: spray reads
# net.ipv4.tcp_abort_on_overflow and the like with sysctl, and procps is "important", not
# "required", so a minimal root (debootstrap minbase, a container image) lacks it. openssl: flip
# --tls runs openssl s_time (said here, not left to ca-certificates' dependency on it).
# shellcheck disable=SC2034  # used by infra/lab
TOOL_PKGS=(python3 python3-psutil python3-prometheus-client python3-jinja2 python3-markdown
           python3-matplotlib python3-locust wrk apache2-utils hey httperf procps openssl)
# shellcheck disable=SC2034  # used by infra/lab
TEST_PKGS=("${TOOL_PKGS[@]}" nginx-light curl)
TEST_PKGS+=(jmeter jmeter-http groovy)  # the JMeter plan run for real (loadscripts/jmeter/run)
TEST_PKGS+=(haproxy iproute2 docker-compose nodejs systemd)  # infra tests (+ npm: see infra/lab test)
TEST_PKGS+=(clang-14 libclang-rt-14-dev)  # libFuzzer targets (tests/fuzz, build-fuzz)
# The container lab (infra/lab up --containers, infra/lib/containers.sh) and its tests. iptables:
# netavark (podman's network backend here) runs iptables and ip6tables to set up every container
# network, podman build's RUN steps included ("netavark: No such file or directory (os error 2)");
# podman only Suggests iptables and nothing Depends on it, so --no-install-recommends lacks it.
CONTAINER_PKGS=(podman podman-compose runc netavark aardvark-dns iptables debootstrap curl)
TEST_PKGS+=("${CONTAINER_PKGS[@]}")
TEST_PKGS+=(valgrind strace)  # bench --suite cost (tests/integration/tooling/test_cost.py)
# report.html's test in headless Chromium (test_report.py)
TEST_PKGS+=(chromium)
# the tree's structure rules (tests/tools/structure.py) read the tracked files from git ls-files: a
# checkout has git, but a copy of the tree made otherwise would not
TEST_PKGS+=(git)
# infra/lab up --monitoring (infra/lib/monitoring.sh) and its test (test_monitoring.py)
MON_PKGS=(prometheus prometheus-node-exporter prometheus-postgres-exporter prometheus-redis-exporter)
TEST_PKGS+=("${MON_PKGS[@]}")

# The programs each part runs, as CMD:PKG: CMD a name looked up on PATH (or a path that must exist),
# PKG the package of the part's list above that brings it, itself or through its Depends (packages
# are installed with --no-install-recommends: a program only a Recommends brings is a gap). Read
# from what the code runs (infra/, loadscripts/, tests/, .ci/), helpers that other programs start
# included. Programs of Essential packages (coreutils, util-linux, bash, tar, grep, sed, findutils,
# gzip, dpkg, libc-bin: setsid, runuser, setarch, taskset, ldd, ...) are left out: every Debian has
# them. infra/lab checks them after installing (need_present), `infra/lab fresh-root --stage packages`
# on a fresh Debian root, tests/integration/infra/test_pkglists.py against dpkg's records.
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
LAB_CMDS=(cc:build-essential meson:meson ninja:ninja-build pkg-config:pkg-config
          "$PG_BIN/initdb:postgresql-15" "$PG_BIN/pg_ctl:postgresql-15" "$PG_BIN/postgres:postgresql-15"
          "$PG_BIN/psql:postgresql-client-15" redis-server:redis-server redis-cli:redis-server  # redis-tools
          curl:curl)
# infra/lab up's options add one package each (up --tls: openssl, --lb haproxy|nginx, --netns:
# iproute2), --monitoring those of MON_PKGS: the commands they bring (lab_option_cmds).
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
LAB_OPTION_CMDS=(openssl:openssl haproxy:haproxy nginx:nginx-light ip:iproute2 tc:iproute2
                 prometheus:prometheus promtool:prometheus prometheus-node-exporter:prometheus-node-exporter
                 prometheus-postgres-exporter:prometheus-postgres-exporter
                 prometheus-redis-exporter:prometheus-redis-exporter)
# podman's helpers: conmon, the runtime (runc), netavark (the network backend) and aardvark-dns
# (container-name DNS) in /usr/lib/podman; debootstrap fetches with wget.
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
CONTAINER_CMDS=(podman:podman podman-compose:podman-compose conmon:podman runc:runc
                /usr/lib/podman/netavark:netavark /usr/lib/podman/aardvark-dns:aardvark-dns
                iptables:iptables ip6tables:iptables
                debootstrap:debootstrap wget:debootstrap curl:curl)
# What the tools of loadscripts/ run: the packages of LAB_PKGS and TOOL_PKGS bring them.
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
TOOL_CMDS=(/usr/bin/python3:python3 wrk:wrk ab:apache2-utils hey:hey httperf:httperf
           /usr/bin/locust:python3-locust sysctl:procps openssl:openssl)
# What infra/lab test and the tests run (with LAB_CMDS, TOOL_CMDS and CONTAINER_CMDS): the packages of
# LAB_PKGS and TEST_PKGS (and npm) bring them.
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
TEST_CMDS=(clang-14:clang-14
           jmeter:jmeter java:jmeter /usr/share/java/bsh.jar:jmeter /usr/share/java/groovy-all.jar:groovy
           nginx:nginx-light /usr/sbin/nginx:nginx-light haproxy:haproxy
           "$PG_BIN/pgbench:postgresql-15" "$PG_BIN/pg_isready:postgresql-client-15" psql:postgresql-client-15
           redis-benchmark:redis-server redis-cli:redis-server curl:curl
           valgrind:valgrind callgrind_control:valgrind strace:strace
           ip:iproute2 tc:iproute2 ss:iproute2
           node:nodejs npm:npm docker-compose:docker-compose systemd-analyze:systemd readelf:build-essential
           /usr/bin/chromium:chromium git:git
           prometheus:prometheus promtool:prometheus prometheus-node-exporter:prometheus-node-exporter
           prometheus-postgres-exporter:prometheus-postgres-exporter
           prometheus-redis-exporter:prometheus-redis-exporter)
# The Python modules loadscripts/ imports beyond the standard library (and the parts of it Debian
# builds as C extensions), as MODULE:PKG, for /usr/bin/python3; the tests import nothing more.
# shellcheck disable=SC2034  # used by infra/lab and infra/lib/freshroot.sh
TOOL_PY_MODULES=(locust:python3-locust locust.contrib.fasthttp:python3-locust gevent:python3-locust
                 matplotlib.pyplot:python3-matplotlib ssl:python3 ctypes:python3 crypt:python3
                 xml.etree.ElementTree:python3 jinja2:python3-jinja2 markupsafe:python3-jinja2
                 markdown:python3-markdown prometheus_client.parser:python3-prometheus-client
                 psutil:python3-psutil)

say()  { printf '%s\n' "$*"; }
step() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# The OS user that owns PostgreSQL data dirs and must run initdb/pg_ctl.
pg_os_user() { if is_root; then echo postgres; else id -un; fi; }

# Run a command as the PostgreSQL OS user, from / (an untraversable cwd makes postgres tools complain).
as_pg() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

# mkdir owned by the PostgreSQL OS user: pg_mkdir MODE DIR...
pg_mkdir() {
  local mode=$1; shift
  if is_root; then
    install -d -m "$mode" -o postgres -g postgres "$@"
  else
    install -d -m "$mode" "$@"
  fi
}

# ---- Debian packages ---------------------------------------------------------------------------

missing_pkgs() {
  local p st
  for p in "$@"; do
    # shellcheck disable=SC2016  # ${Status} is dpkg-query's format, not a shell expansion
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || st=
    [ "$st" = "install ok installed" ] || printf '%s\n' "$p"
  done
}

# ensure_pkgs PKG...: installs the missing ones (root), or explains and exits 1 (not root).
ensure_pkgs() {
  local -a missing
  mapfile -t missing < <(missing_pkgs "$@" | awk '!seen[$0]++')
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  if ! is_root; then
    say "These Debian packages are missing: ${missing[*]}"
    say "Install them as root, then run this again:"
    say "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
  step "installing packages: ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# npm_pkgs: npm, unless a Node.js that bundles its own (NodeSource's) is installed.
npm_pkgs() { command -v npm >/dev/null 2>&1 || echo npm; }

# have_cmd CMD: CMD is on PATH (a name) or exists (a path).
have_cmd() { case $1 in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac; }

# missing_cmds PART CMD:PKG...: "CMD (needed by PART; package: PKG)" for every command not there.
missing_cmds() {
  local part=$1 e
  shift
  for e in "$@"; do
    have_cmd "${e%:*}" || printf '%s (needed by %s; package: %s)\n' "${e%:*}" "$part" "${e##*:}"
  done
}

# missing_py_modules PART import|find MODULE:PKG...: "python3 module MODULE (needed by PART; package:
# PKG)" for every module /usr/bin/python3 cannot import (find: only looks its top-level package up,
# without importing anything: cheap).
missing_py_modules() {
  local part=$1 how=$2
  shift 2
  /usr/bin/python3 - "$part" "$how" "$@" 2>/dev/null <<'PY' || printf 'python3 module %s (needed by %s; package: python3)\n' "$*" "$part"
import importlib, importlib.util, sys
part, how = sys.argv[1:3]
for entry in sys.argv[3:]:
    module, pkg = entry.rsplit(":", 1)
    try:
        ok = (importlib.import_module(module) is not None if how == "import"
              else importlib.util.find_spec(module.split(".")[0]) is not None)
    except Exception:  # noqa: BLE001 - any failure to import is what is reported
        ok = False
    if not ok:
        print("python3 module %s (needed by %s; package: %s)" % (module, part, pkg))
PY
}

# need_present MISSING: after ensure_pkgs, MISSING (lines of missing_cmds, missing_py_modules) must be
# empty; else one line and exit 1: a package list lacks what brings a program, and the gap shows here,
# not deep inside a build or a test.
need_present() {
  [ -z "$1" ] ||
    die "still missing after installing packages: $(printf '%s' "$1" | paste -sd ';' | sed 's/;/; /g') (a gap in the package lists of infra/lib/common.sh)"
}

# lab_option_cmds PKG...: the entries of LAB_OPTION_CMDS whose package is one of PKG.
lab_option_cmds() {
  local e p
  for e in "${LAB_OPTION_CMDS[@]}"; do
    for p in "$@"; do
      [ "${e##*:}" = "$p" ] && printf '%s\n' "$e"
    done
  done
  return 0
}

# ---- the Debian mirror (this machine's apt sources, never a host name of our own) --------------------

# apt_host_sources: "URI SUITE [COMPONENT...]" for every binary source of this machine's apt, from
# /etc/apt/sources.list, sources.list.d/*.list (one-line style) and sources.list.d/*.sources (deb822).
# deb-src, disabled stanzas (Enabled: no), [options] and comments are left out. (APT_ETC: another
# directory than /etc/apt, for the tests.)
apt_host_sources() {
  local f etc=${APT_ETC:-/etc/apt}
  for f in "$etc/sources.list" "$etc"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '{ sub(/#.*/, "") }
         $1 == "deb" {
           i = 2
           if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
           line = $i " " $(i + 1)
           for (j = i + 2; j <= NF; j++) line = line " " $j
           if (NF >= i + 1) print line
         }' "$f"
  done
  for f in "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush(  n, m, a, b, u, s) {
           if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
             n = split(uris, u, " "); m = split(suites, s, " ")
             for (a = 1; a <= n; a++) for (b = 1; b <= m; b++) print u[a], s[b], comps
           }
           types = uris = suites = comps = enabled = ""
         }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         /^[ \t]/ { next }   # a continuation line (an inline Signed-By key)
         /^[A-Za-z-]+:/ {
           key = tolower(substr($0, 1, index($0, ":") - 1)); val = substr($0, index($0, ":") + 1)
           gsub(/^[ \t]+|[ \t]+$/, "", val)
           if (key == "types") types = val; else if (key == "uris") uris = val
           else if (key == "suites") suites = val; else if (key == "components") comps = val
           else if (key == "enabled") enabled = val
         }
         END { flush() }' "$f"
  done
}

# debian_mirror [RELEASE]: the URI (no trailing /) this machine's apt fetches Debian RELEASE
# (default bookworm) from: debootstrap and the roots made here use the same mirror as the machine.
debian_mirror() {
  local rel=${1:-bookworm} uri
  uri=$(apt_host_sources | awk -v s="$rel" '$2 == s { print $1; exit }')
  [ -n "$uri" ] ||
    die "this machine's apt has no source for Debian $rel (/etc/apt/sources.list, /etc/apt/sources.list.d/): no mirror to use"
  printf '%s\n' "${uri%/}"
}

# debian_sources_list [RELEASE]: /etc/apt/sources.list lines for a Debian RELEASE root: this
# machine's sources of RELEASE, RELEASE-updates and RELEASE-security (as an installed Debian has them).
debian_sources_list() {
  local rel=${1:-bookworm}
  debian_mirror "$rel" >/dev/null
  apt_host_sources | awk -v r="$rel" '
    $2 == r || $2 == r "-updates" || $2 == r "-security" {
      uri = $1; sub(/\/$/, "", uri); comps = ""
      for (i = 3; i <= NF; i++) comps = comps " " $i
      line = "deb " uri " " $2 (comps == "" ? " main" : comps)
      if (!seen[line]++) print line
    }'
}

# ---- Debian root filesystems --------------------------------------------------------------------------

# mounts_under DIR: the mount points at DIR or below it, deepest first (as this process sees them).
mounts_under() {
  local d
  d=$(cd "$1" && pwd -P) || return 0
  findmnt -rn -o TARGET | awk -v d="$d" '$0 == d || index($0, d "/") == 1' | sort -r
}

# rm_tree DIR: rm -rf DIR, refused while anything is mounted at DIR or below (a bind mount of /dev,
# /proc, /sys or a host directory would be emptied through it).
rm_tree() {
  local m
  [ -e "$1" ] || return 0
  m=$(mounts_under "$1")
  [ -z "$m" ] || die "not removing $1: mounted below it: $(printf '%s' "$m" | tr '\n' ' ')"
  rm -rf --one-file-system "$1"
}

# debian_minbase_tar RELEASE TAR: TAR holds a `debootstrap --variant=minbase RELEASE` root from this
# machine's mirror, /etc/apt/sources.list as an installed Debian has it (debian_sources_list), without
# downloaded .debs, apt lists or /debootstrap (numeric owners). Made once: an existing TAR is kept.
# The container lab's base images and the roots of `infra/lab fresh-root` start from it.
debian_minbase_tar() {
  local rel=$1 tar=$2 mirror sources dir log t0
  [ -s "$tar" ] && return 0
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (apt-get install debootstrap)"
  mirror=$(debian_mirror "$rel")
  sources=$(debian_sources_list "$rel")
  mkdir -p "$(dirname "$tar")"
  dir=$(mktemp -d "$tar.root.XXXXXX")
  chmod 755 "$dir"   # the root directory of the tarball ("./"): mktemp's 700 would lock every user but root out
  log=${tar%.tar}.debootstrap.log
  t0=$SECONDS
  step "debootstrap --variant=minbase $rel $mirror (once; cached as ${tar#"$ROOT"/})"
  if ! debootstrap --variant=minbase "$rel" "$dir" "$mirror" > "$log" 2>&1; then
    umount "$dir/proc" "$dir/sys" 2>/dev/null || true
    tail -n 20 "$log" >&2
    rm_tree "$dir"
    die "debootstrap failed (log: $log)"
  fi
  printf '%s\n' "$sources" > "$dir/etc/apt/sources.list"
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir/debootstrap"
  tar -C "$dir" --numeric-owner -cf "$tar.new" .
  rm_tree "$dir"
  mv "$tar.new" "$tar"
  say "(debootstrap of $rel: $((SECONDS - t0)) s)"
}

# ---- processes (no procps on a bare Debian: read /proc) -------------------------------------------

# read_pidfile FILE: prints the pid if FILE holds a number.
read_pidfile() {
  local p=
  [ -f "$1" ] || return 1
  read -r p < "$1" || true
  case $p in ''|*[!0-9]*) return 1 ;; esac
  printf '%s\n' "$p"
}

# pid_alive PID: the process exists and is not a zombie (PID 1 here may reap orphans late).
pid_alive() {
  local stat
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# proc_cwd_is PID DIR: the process runs with DIR as its working directory (same inode; no forks).
proc_cwd_is() { [ -d "$2" ] && [ "/proc/$1/cwd" -ef "$2" ]; }

proc_comm_is() {
  local c=
  { read -r c < "/proc/$1/comm"; } 2>/dev/null || return 1
  [ "$c" = "$2" ]
}

# proc_has_arg PID ARG: one of the process's argv entries is exactly ARG.
proc_has_arg() {
  [ -r "/proc/$1/cmdline" ] || return 1
  tr '\0' '\n' < "/proc/$1/cmdline" | grep -Fxq -- "$2"
}

# wait_gone PID SECONDS: 0 once PID is gone, 1 if it is still there after SECONDS.
wait_gone() {
  local pid=$1 n=$(( $2 * 10 ))
  while [ "$n" -gt 0 ]; do
    pid_alive "$pid" || return 0
    sleep 0.1
    n=$((n - 1))
  done
  ! pid_alive "$pid"
}

# stop_pid PID SECONDS: SIGTERM, wait, then SIGKILL.
stop_pid() {
  local pid=$1 secs=$2
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait_gone "$pid" "$secs" && return 0
  warn "pid $pid did not stop within ${secs}s: sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid" 5 || true
}

# pg_pids_in DIR: postgres processes whose working directory is DIR (backends left by a crash).
pg_pids_in() {
  local d pid
  [ -d "$1" ] || return 0
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$d/cwd" -ef "$1" ] 2>/dev/null && proc_comm_is "$pid" postgres && printf '%s\n' "$pid"
  done
  return 0
}

# ---- ports ----------------------------------------------------------------------------------------

# port_in_use PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port [EXCLUDE...]: a loopback port nothing listens on.
free_port() {
  local p tries=0 x ok
  while [ "$tries" -lt 50 ]; do
    tries=$((tries + 1))
    if [ -x /usr/bin/python3 ]; then
      p=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    else
      p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
    fi
    ok=1
    for x in "$@"; do [ "$x" = "$p" ] && ok=0; done
    [ "$ok" = 1 ] && ! port_in_use "$p" && { printf '%s\n' "$p"; return 0; }
  done
  die "could not find a free port"
}

# ---- where PostgreSQL may live ----------------------------------------------------------------------

# pg_dir_ok DIR: the PostgreSQL OS user can traverse DIR and DIR is short and plain enough for a
# data dir + unix socket dir below it (socket paths must stay under ~107 characters).
pg_dir_ok() {
  local dir=$1
  [ "${#dir}" -le 64 ] || return 1
  case $dir in *[!A-Za-z0-9/._+-]*) return 1 ;; esac
  [ -d "$dir" ] || return 1
  if is_root; then
    runuser -u postgres -- test -x "$dir" 2>/dev/null
  else
    test -x "$dir"
  fi
}

# tmp_home: /tmp/sutlab-<hash of ROOT>, ours, created if needed (for repos postgres cannot reach).
tmp_home() {
  local h d
  h=$(printf '%s' "$ROOT" | sha256sum | cut -c1-10)
  d=/tmp/sutlab-$h
  if [ ! -d "$d" ]; then
    mkdir -m 755 "$d"
  fi
  if [ -L "$d" ] || [ ! -O "$d" ]; then
    die "$d exists but is not a directory owned by $(id -un): remove it"
  fi
  printf '%s\n' "$d"
}

# pg_init DATA LOG [INITDB ARGS...]: initdb into DATA (created, owned by the PostgreSQL OS user) and make
# postgresql.conf include sutlab.conf, which pg_write_conf rewrites before each start.
pg_init() {
  local data=$1 log=$2
  shift 2
  pg_mkdir 700 "$data"
  if ! as_pg "$PG_BIN/initdb" -D "$data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync "$@" \
       >"$log" 2>&1; then
    cat "$log" >&2
    die "initdb failed in $data"
  fi
  rm -f "$log"
  printf "\n# sutlab: per-instance settings (port, sockets) live in sutlab.conf\ninclude_if_exists = 'sutlab.conf'\n" \
    >> "$data/postgresql.conf"
}

# pg_write_conf DATA PORT SOCKDIR [EXTRA LINE...]
pg_write_conf() {
  local data=$1 port=$2 sock=$3; shift 3
  {
    printf '# written by sutlab infra scripts; rewritten on every start\n'
    printf "listen_addresses = '127.0.0.1'\n"
    printf 'port = %s\n' "$port"
    printf "unix_socket_directories = '%s'\n" "$sock"
    [ "$#" -gt 0 ] && printf '%s\n' "$@"
  } > "$data/sutlab.conf"
  if is_root; then chown postgres:postgres "$data/sutlab.conf"; fi
}

# pg_running_pid DATA: pid of the postmaster serving DATA, if one runs; clears a stale postmaster.pid.
pg_running_pid() {
  local data=$1 pid
  pid=$(read_pidfile "$data/postmaster.pid") || return 1
  if pid_alive "$pid" && proc_comm_is "$pid" postgres && proc_cwd_is "$pid" "$data"; then
    printf '%s\n' "$pid"
    return 0
  fi
  return 1
}

# pg_clear_stale DATA [SOCKDIR]: after a crash, kill leftover backends and remove a stale
# postmaster.pid and socket lock files (their pid may now belong to another process).
pg_clear_stale() {
  local data=$1 sock=${2:-} p f
  pg_running_pid "$data" >/dev/null && return 0
  for p in $(pg_pids_in "$data"); do
    kill -KILL "$p" 2>/dev/null || true
  done
  if [ -f "$data/postmaster.pid" ]; then
    say "(removing stale $data/postmaster.pid)"
    rm -f "$data/postmaster.pid"
  fi
  if [ -n "$sock" ]; then
    for f in "$sock"/.s.PGSQL.*; do
      [ -e "$f" ] || continue
      rm -f "$f"
    done
  fi
  return 0
}

# pg_port_of DATA: the port in a running postmaster.pid (4th line).
pg_port_of() { sed -n 4p "$1/postmaster.pid" 2>/dev/null; }

# pg_start DATA LOG: start and wait until it accepts connections. Returns pg_ctl's status.
pg_start() {
  local data=$1 log=$2
  as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null
}

# pg_stop DATA MODE: stop the postmaster serving DATA (if any) and any orphaned backends.
pg_stop() {
  local data=$1 mode=$2 pid p
  if pid=$(pg_running_pid "$data"); then
    if as_pg "$PG_BIN/pg_ctl" -D "$data" -m "$mode" -w -t 30 stop >/dev/null 2>&1; then
      return 0   # the postmaster waited for all its children
    fi
    warn "pg_ctl stop failed; killing postmaster $pid"
    kill -QUIT "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null || true
  fi
  for p in $(pg_pids_in "$data"); do
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -f "$data/postmaster.pid"
}

# ---- Redis -------------------------------------------------------------------------------------------

# redis_ping PORT: PONG from 127.0.0.1:PORT (bash /dev/tcp, no redis-cli needed).
redis_ping() {
  local line=
  {
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'PING\r\n' >&3
    read -r -t 2 line <&3 || true
    exec 3<&-
  } 2>/dev/null
  [ "${line%$'\r'}" = "+PONG" ]
}

# redis_running_pid PIDFILE DIR: pid of our redis-server (one that runs in DIR).
redis_running_pid() {
  local pid
  pid=$(read_pidfile "$1") || return 1
  if pid_alive "$pid" && proc_comm_is "$pid" redis-server && proc_cwd_is "$pid" "$2"; then
    printf '%s\n' "$pid"
    return 0
  fi
  return 1
}

# redis_start PORT DIR PIDFILE LOGFILE: daemonized redis-server without persistence; waits for PONG.
redis_start() {
  local port=$1 dir=$2 pidfile=$3 logfile=$4 n=50 pid
  rm -f "$pidfile"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile "$pidfile" --logfile "$logfile" --dir "$dir" >/dev/null
  while [ "$n" -gt 0 ]; do
    if pid=$(redis_running_pid "$pidfile" "$dir") && redis_ping "$port"; then
      return 0
    fi
    sleep 0.05
    n=$((n - 1))
  done
  if [ -n "${pid:-}" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  return 1
}

# redis_stop PIDFILE DIR: SIGTERM our (verified) redis-server (no persistence: nothing is saved).
redis_stop() {
  local pid
  if pid=$(redis_running_pid "$1" "$2"); then
    stop_pid "$pid" 5
  fi
  rm -f "$1"
}
