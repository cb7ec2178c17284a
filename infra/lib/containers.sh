# shellcheck shell=bash
# The container lab (`infra/lab up --containers [--instances N] [-- FLAGS]`): the compose stack of
# infra/deploy/compose/ (PostgreSQL, Redis, a seeding job, N sutlab, HAProxy) run by podman-compose
# with rootful podman, on its own network, HAProxy published on 127.0.0.1:$C_PORT only.
#
# No registry is reachable here, so the images the Dockerfile and the compose file start FROM are
# made on this machine:
#   localhost/debian:bookworm, localhost/debian:bookworm-slim   debootstrap --variant=minbase, then
#       `podman import` (the slim one without documentation, as the official -slim image). Podman
#       resolves the Dockerfile's `FROM debian:bookworm` to them. The root filesystems are cached as
#       tarballs in var/cache/containers/ (shared by every state directory), so a new podman storage
#       imports them again in seconds instead of running debootstrap; the debootstrap root they are
#       made from is var/cache/debian/debian-bookworm-minbase.tar (shared with infra/lab fresh-root).
#   localhost/sutlab:<version>          infra/deploy/container/Dockerfile, unchanged
#   localhost/sutlab-lab-postgres:15, -redis:7, -haproxy:2.6
#       stand-ins for the official images (infra/deploy/podman/*/Containerfile), which the override
#       infra/deploy/podman/compose.podman.yml puts in place of postgres:15-bookworm, redis:7-bookworm
#       and haproxy:2.6.
# Podman-only settings live here and in that override, never in the files a Docker user runs:
# $C_DIR/containers.conf (CONTAINERS_CONF) chooses runc (crun refuses this kernel's hybrid cgroups),
# netavark (container-name DNS) and default rlimits podman can set (its defaults fail here).
#
# Sourced by infra/lab after common.sh; uses its ROOT, VAR, LOGDIR. Nothing here runs on its own.

C_DIR=$VAR/containers
C_CACHE=$ROOT/var/cache/containers
C_PODMAN_DIR=$ROOT/infra/deploy/podman
C_COMPOSE=$ROOT/infra/deploy/compose/docker-compose.yml
C_OVERRIDE=$C_PODMAN_DIR/compose.podman.yml
C_PORT=${SUTLAB_LAB_CONTAINER_PORT:-18080}
C_PROJECT=${SUTLAB_LAB_PROJECT:-sutlab-lab}
C_DEBIAN=bookworm
C_DEBIAN_TAR=$ROOT/var/cache/debian/debian-$C_DEBIAN-minbase.tar
C_VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -n 1)
C_IMAGE=localhost/sutlab:${C_VERSION:-dev}
# service -> image of the stand-ins (the override file names the same tags)
C_STANDINS=(postgres:localhost/sutlab-lab-postgres:15 redis:localhost/sutlab-lab-redis:7
            haproxy:localhost/sutlab-lab-haproxy:2.6)

case $C_PORT in ''|*[!0-9]*) die "SUTLAB_LAB_CONTAINER_PORT must be a port number, got '$C_PORT'" ;; esac
case $C_PROJECT in
  [a-z0-9]*) case $C_PROJECT in *[!a-z0-9_-]*) die "SUTLAB_LAB_PROJECT: lower-case letters, digits, - and _ only" ;; esac ;;
  *) die "SUTLAB_LAB_PROJECT must start with a lower-case letter or a digit" ;;
esac

# c_conf: writes $C_DIR/containers.conf and exports CONTAINERS_CONF (every podman call below, and
# podman-compose's, reads it). The rlimits are the largest podman can set here: the process's hard
# limits, at most 65536 descriptors and 32768 processes (podman caps its own nproc at 32768, and
# runc cannot raise a container's above its parent's: "error setting rlimit type 6/7").
c_conf() {
  local nofile nproc
  nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
  { [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; } && nofile=65536
  { [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
  C_NOFILE=$nofile
  mkdir -p "$C_DIR"
  cat > "$C_DIR/containers.conf.new" <<EOF
# written by infra/lab (the container lab); rewritten on every up
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"

[network]
network_backend = "netavark"
EOF
  mv "$C_DIR/containers.conf.new" "$C_DIR/containers.conf"
  export CONTAINERS_CONF=$C_DIR/containers.conf
}

# c_use_conf: CONTAINERS_CONF for commands after up (the file up wrote, or a fresh one).
c_use_conf() {
  if [ -f "$C_DIR/containers.conf" ]; then
    export CONTAINERS_CONF=$C_DIR/containers.conf
  else
    c_conf
  fi
}

c_engine_present() { command -v podman >/dev/null 2>&1 && command -v podman-compose >/dev/null 2>&1; }

# ---- images -----------------------------------------------------------------------------------------

# c_rootfs_tarballs: $C_CACHE/debian-<release>{,-slim}.tar, made once from the minbase root that
# debootstrap made (debian_minbase_tar, cached in var/cache/debian/, shared with infra/lab fresh-root).
c_rootfs_tarballs() {
  local full=$C_CACHE/debian-$C_DEBIAN.tar slim=$C_CACHE/debian-$C_DEBIAN-slim.tar dir t0
  if [ -s "$full" ] && [ -s "$slim" ]; then
    return 0
  fi
  t0=$SECONDS
  debian_minbase_tar "$C_DEBIAN" "$C_DEBIAN_TAR"
  mkdir -p "$C_CACHE"
  dir=$(mktemp -d "$C_CACHE/rootfs.XXXXXX")
  tar -C "$dir" --numeric-owner -xf "$C_DEBIAN_TAR"
  # What the official images add to a plain debootstrap (which has the updates and security suites
  # already): apt settings that keep downloaded packages out of image layers.
  cat > "$dir/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  printf 'APT::Install-Recommends "false";\n' > "$dir/etc/apt/apt.conf.d/docker-no-recommends"
  rm -rf "$dir"/var/log/*
  : > "$dir/etc/hostname"
  tar -C "$dir" --numeric-owner -cf "$full.new" .
  # -slim: no documentation, manual pages or translations, now or from later installs
  cat > "$dir/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/usr/share/locale/* "$dir"/usr/share/lintian/*
  tar -C "$dir" --numeric-owner -cf "$slim.new" .
  rm_tree "$dir"
  mv "$full.new" "$full"
  mv "$slim.new" "$slim"
  say "(the two root filesystems: $((SECONDS - t0)) s)"
}

# c_base_images: localhost/debian:<release> and -slim in podman's storage.
c_base_images() {
  local tag out
  if podman image exists "localhost/debian:$C_DEBIAN" && podman image exists "localhost/debian:$C_DEBIAN-slim"; then
    return 0
  fi
  c_rootfs_tarballs
  for tag in "$C_DEBIAN" "$C_DEBIAN-slim"; do
    step "podman import ${C_CACHE#"$ROOT"/}/debian-$tag.tar as localhost/debian:$tag"
    out=$(podman import --change 'CMD ["bash"]' "$C_CACHE/debian-$tag.tar" "localhost/debian:$tag" 2>&1) ||
      { printf '%s\n' "$out" >&2; die "podman import of $C_CACHE/debian-$tag.tar failed"; }
  done
}

# c_build TAG CONTEXT CONTAINERFILE LOG [BUILD ARGS...]: podman build (layers cached), output to LOG.
c_build() {
  local tag=$1 ctx=$2 file=$3 log=$4
  shift 4
  printf '\n===== %s podman build -t %s -f %s %s %s\n' "$(date '+%F %T')" "$tag" "$file" "$*" "$ctx" >> "$log"
  # docker format: the OCI one has no HEALTHCHECK (podman drops it with a warning)
  podman build --format docker --layers --pull=never "$@" -t "$tag" -f "$file" "$ctx" >> "$log" 2>&1
}

# c_images: every image of the stack, built in parallel; a failed build names its log.
c_images() {
  local t0=$SECONDS entry svc tag pids=() names=() logs=() i rc=0
  c_base_images
  mkdir -p "$LOGDIR"
  step "building $C_IMAGE (infra/deploy/container/Dockerfile) and the stand-ins (logs: ${LOGDIR#"$ROOT"/}/containers-build-*.log)"
  c_build "$C_IMAGE" "$ROOT" "$ROOT/infra/deploy/container/Dockerfile" "$LOGDIR/containers-build-sutlab.log" \
    --ignorefile "$ROOT/infra/deploy/container/Dockerfile.dockerignore" &
  pids+=($!) names+=("$C_IMAGE") logs+=("$LOGDIR/containers-build-sutlab.log")
  for entry in "${C_STANDINS[@]}"; do
    svc=${entry%%:*} tag=${entry#*:}
    c_build "$tag" "$C_PODMAN_DIR/$svc" "$C_PODMAN_DIR/$svc/Containerfile" "$LOGDIR/containers-build-$svc.log" &
    pids+=($!) names+=("$tag") logs+=("$LOGDIR/containers-build-$svc.log")
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[i]}"; then
      say "building ${names[i]} failed; last lines of ${logs[i]}:" >&2
      tail -n 15 "${logs[i]}" >&2
      rc=1
    fi
  done
  [ "$rc" = 0 ] || die "image build failed"
  say "(images ready in $((SECONDS - t0)) s)"
}

# c_image_size IMAGE: its size in MB (podman's count, as `podman images` shows it).
c_image_size() {
  local bytes
  bytes=$(podman image inspect --format '{{.Size}}' "$1" 2>/dev/null) || return 1
  printf '%s MB\n' "$(( (bytes + 500000) / 1000000 ))"
}

# ---- the stack ----------------------------------------------------------------------------------------

# c_load: the lab recorded by up in $C_DIR/lab.conf (C_N, C_PROJECT, C_PORT, C_IMAGE); 1 if none.
C_N=0
c_load() {
  local k v
  [ -f "$C_DIR/lab.conf" ] || return 1
  while IFS='=' read -r k v; do
    case $k in
      N) C_N=$v ;; PROJECT) C_PROJECT=$v ;; PORT) C_PORT=$v ;; IMAGE) C_IMAGE=$v ;;
    esac
  done < "$C_DIR/lab.conf"
  return 0
}

c_name() { printf '%s_%s_%s\n' "$C_PROJECT" "$1" "${2:-1}"; }

# c_compose ARGS...: podman-compose on the compose file, the podman override and the lab's own
# (server flags), output appended to the compose log.
c_compose() {
  local files=(-f "$C_COMPOSE" -f "$C_OVERRIDE")
  [ -f "$C_DIR/compose.lab.yml" ] && files+=(-f "$C_DIR/compose.lab.yml")
  mkdir -p "$LOGDIR"
  printf '\n===== %s podman-compose -p %s %s\n' "$(date '+%F %T')" "$C_PROJECT" "$*" >> "$LOGDIR/containers-compose.log"
  SUTLAB_IMAGE=$C_IMAGE SUTLAB_REPLICAS=$C_N FRONT_ADDRESS=127.0.0.1 FRONT_PORT=$C_PORT \
    SUTLAB_SEED_SIZE=${C_SIZE:-tiny} SUTLAB_FLAGS=${C_FLAGS:-} podman-compose -p "$C_PROJECT" "${files[@]}" "$@" \
    >> "$LOGDIR/containers-compose.log" 2>&1
}

c_compose_failed() {
  tail -n 20 "$LOGDIR/containers-compose.log" >&2
  die "$1 (log: $LOGDIR/containers-compose.log)"
}

# c_project_containers: names of every container of the project (any state).
c_project_containers() {
  podman ps -a --filter "label=io.podman.compose.project=$C_PROJECT" --format '{{.Names}}' 2>/dev/null
}

# c_remove: every container of the project stopped (SIGTERM, 15 s) and removed, its network too;
# the database volume is kept. Works after a crash and whatever N the last up used.
c_remove() {
  local names
  mapfile -t names < <(c_project_containers)
  if [ "${#names[@]}" -gt 0 ]; then
    step "removing the containers of $C_PROJECT (${#names[@]})"
    podman stop -t 15 "${names[@]}" >/dev/null 2>&1 || true
    podman rm -f "${names[@]}" >/dev/null 2>&1 || true
  fi
  if podman network exists "${C_PROJECT}_default" 2>/dev/null; then
    podman network rm -f "${C_PROJECT}_default" >/dev/null 2>&1 || true
  fi
}

# c_podman_start CONTAINER...: podman start, quiet about the health-check timers it cannot make
# without systemd (the HEALTHCHECKs still run on demand: podman healthcheck run, infra/lab status).
c_podman_start() {
  local out
  out=$(podman start "$@" 2>&1) || { printf '%s\n' "$out" >&2; die "podman start $* failed"; }
}

# c_wait_exec SECONDS WHAT CONTAINER CMD...: until CMD succeeds inside CONTAINER.
c_wait_exec() {
  local secs=$1 what=$2 ctr=$3 deadline
  shift 3
  deadline=$((SECONDS + secs))
  until podman exec "$ctr" "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      podman logs --tail 20 "$ctr" >&2 || true
      die "$what did not come up within $secs s (container $ctr)"
    fi
    sleep 0.3
  done
}

# c_lb_states: "NAME STATUS" of every HAProxy server with an address (the stats CSV, on the front).
c_lb_states() {
  curl -fsS --max-time 3 "http://127.0.0.1:$C_PORT/_lb/haproxy;csv" 2>/dev/null |
    awk -F, '$1 == "sutlab" && $2 != "FRONTEND" && $2 != "BACKEND" && $18 !~ /^MAINT/ { print $2, $18 }'
}

# c_wait_backends N SECONDS: HAProxy sees N servers UP.
c_wait_backends() {
  local n=$1 deadline=$((SECONDS + $2)) up
  while :; do
    up=$(c_lb_states | awk '$2 == "UP"' | wc -l)
    [ "$up" -ge "$n" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      warn "HAProxy sees $up of $n sutlab containers UP after $2 s"
      return 1
    fi
    sleep 0.3
  done
}

# c_flags_string FLAGS...: FLAGS as one SUTLAB_FLAGS string, each word single-quoted: the compose file
# hands it to every replica (command: serve ${SUTLAB_FLAGS}), split as a shell splits it.
c_flags_string() {
  local f out=''
  for f in "$@"; do out+="${out:+ }'${f//\'/\'\"\'\"\'}'"; done
  printf '%s\n' "$out"
}

# c_env_passed: NAME=VALUE of every SUTLAB_* variable of this environment that goes to every replica
# as it is, so that any flag can come from SUTLAB_<NAME> with no list to keep: all but the lab's own
# (SUTLAB_LAB_*), SUTLAB_FLAGS (passed as flags) and those the compose file itself sets for the sutlab
# service (its wiring: the database and Redis URLs, the listen address, the workers). A variable that
# names no flag is ignored by sutlab.
c_env_passed() {
  local own v
  own=$(grep -oE '^ +SUTLAB_[A-Z0-9_]+:' "$C_COMPOSE" | tr -d ' :' | sort -u)
  for v in $(compgen -e); do
    case $v in SUTLAB_LAB_*|SUTLAB_FLAGS) continue ;; SUTLAB_*) ;; *) continue ;; esac
    grep -qx "$v" <<<"$own" && continue
    printf '%s=%s\n' "$v" "${!v}"
  done
}

# c_up N SIZE FLAGS...: the whole stack, from images to seeded data and N backends in rotation.
c_up() {
  local n=$1 size=$2 t0=$SECONDS t1 rc f i ctr
  shift 2
  c_conf
  c_images
  c_load || true
  c_remove
  C_N=$n C_SIZE=$size
  if port_in_use "$C_PORT"; then
    die "port $C_PORT is already in use by another program: stop it or set SUTLAB_LAB_CONTAINER_PORT"
  fi
  mkdir -p "$C_DIR"
  # HAProxy's maxconn 20000 needs 40044 descriptors; where containers get fewer (the rlimit podman
  # can set: $C_NOFILE), -n lowers it to what fits (the command line wins over the global section).
  C_FLAGS=$(c_flags_string "$@")
  {
    printf '# written by infra/lab up --containers: the SUTLAB_* of its environment, HAProxy sized to the rlimit\n'
    printf 'services:\n  sutlab:\n    environment:\n'
    c_env_passed | while IFS= read -r kv; do
      printf '      %s: "%s"\n' "${kv%%=*}" "$(printf '%s' "${kv#*=}" | sed 's/[\\"]/\\&/g')"
    done
    if [ "$C_NOFILE" -lt 40100 ]; then
      printf '  haproxy:\n    command: ["haproxy", "-W", "-db", "-n", "%s", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]\n' \
        "$(( (C_NOFILE - 100) / 2 ))"
    fi
  } > "$C_DIR/compose.lab.yml"
  printf 'PROJECT=%s\nN=%s\nPORT=%s\nIMAGE=%s\n' "$C_PROJECT" "$n" "$C_PORT" "$C_IMAGE" > "$C_DIR/lab.conf"
  t1=$SECONDS
  # podman-compose 1.0.3 knows neither depends_on conditions nor profiles: it creates the services
  # named here, and the start follows the conditions of the compose file by hand.
  step "creating the containers of $C_PROJECT (podman-compose)"
  # (not -d: with --no-start, 1.0.3 passes it on to podman create, which refuses it)
  c_compose up --no-start --no-build postgres redis seed sutlab haproxy ||
    c_compose_failed "podman-compose could not create the containers"
  # podman-compose 1.0.3 exits 0 when a podman command of it failed: check what it made
  for ctr in "$(c_name postgres)" "$(c_name redis)" "$(c_name seed)" "$(c_name haproxy)" \
             $(for i in $(seq 1 "$n"); do c_name sutlab "$i"; done); do
    podman container exists "$ctr" || c_compose_failed "podman-compose did not create the container $ctr"
  done
  step "starting PostgreSQL and Redis"
  c_podman_start "$(c_name postgres)" "$(c_name redis)"
  c_wait_exec 60 PostgreSQL "$(c_name postgres)" pg_isready -q -h 127.0.0.1 -U postgres -d sutlab
  c_wait_exec 30 Redis "$(c_name redis)" redis-cli ping
  step "migrating and seeding ($size)"
  c_podman_start "$(c_name seed)"
  rc=$(podman wait "$(c_name seed)" 2>/dev/null) || rc=1
  podman logs "$(c_name seed)" 2>&1 | tail -n 3 | sed 's/^/  seed: /'
  [ "$rc" = 0 ] || die "the seeding job exited $rc (podman logs $(c_name seed))"
  step "starting $n x sutlab and HAProxy on 127.0.0.1:$C_PORT"
  for i in $(seq 1 "$n"); do c_podman_start "$(c_name sutlab "$i")"; done
  c_podman_start "$(c_name haproxy)"
  if ! c_wait_backends "$n" 60; then
    for i in $(seq 1 "$n"); do podman logs --tail 5 "$(c_name sutlab "$i")" 2>&1 | sed "s/^/  sutlab $i: /"; done
    die "the stack did not come up (infra/lab logs; podman-compose log: $LOGDIR/containers-compose.log)"
  fi
  printf 'STARTED_S=%s\nTOTAL_S=%s\n' "$((SECONDS - t1))" "$((SECONDS - t0))" >> "$C_DIR/lab.conf"
  # shellcheck disable=SC2034  # read by infra/lab
  C_STARTED_S=$((SECONDS - t1)) C_TOTAL_S=$((SECONDS - t0))
}

# c_status [INDENT]: the container lab, if one is recorded.
c_status() {
  local pfx=${1:-} name state info
  c_load || return 0
  c_engine_present || { say "${pfx}container lab recorded in ${C_DIR#"$ROOT"/}/, but podman is not installed"; return 0; }
  c_use_conf
  info=$(curl -fsS --max-time 3 "http://127.0.0.1:$C_PORT/metrics" 2>/dev/null | grep -m1 '^sutlab_build_info' || true)
  say "${pfx}container lab  $C_PROJECT  $C_N x sutlab ($C_IMAGE, $(c_image_size "$C_IMAGE" || echo '?')) behind HAProxy  http://127.0.0.1:$C_PORT"
  [ -n "$info" ] && say "${pfx}  flags in force: $info"
  # no systemd here to time the HEALTHCHECKs: run them now, so the status below is current
  while read -r name; do
    podman healthcheck run "$name" </dev/null >/dev/null 2>&1 || true
  done < <(podman ps --filter "label=io.podman.compose.project=$C_PROJECT" --format '{{.Names}}' 2>/dev/null)
  while read -r name state; do
    [ -n "$name" ] || continue
    say "$(printf '%s  %-28s %s' "$pfx" "$name" "$state")"
  done < <(podman ps -a --filter "label=io.podman.compose.project=$C_PROJECT" --format '{{.Names}} {{.Status}}' 2>/dev/null | sort)
  while read -r name state; do
    [ -n "$name" ] && say "${pfx}  haproxy: $name $state"
  done < <(c_lb_states)
  return 0
}

# c_down: stop and remove the stack (the database volume is kept); forget it.
c_down() {
  c_load || return 0
  if c_engine_present; then
    c_use_conf
    c_remove
  fi
  rm -f "$C_DIR/lab.conf" "$C_DIR/compose.lab.yml"
}

# c_logs [-f]: every container's log, each line prefixed with its name.
c_logs() {
  local names
  c_load || return 1
  c_use_conf
  mapfile -t names < <(c_project_containers | sort)
  [ "${#names[@]}" -gt 0 ] || { say "no container of $C_PROJECT exists"; return 0; }
  if [ "$1" = 1 ]; then
    exec podman logs -f -n --tail 20 "${names[@]}"
  fi
  podman logs -n --tail 20 "${names[@]}"
}

# c_reseed SIZE: the container lab's database reseeded to SIZE, replacing its data (sutlab db migrate
# and db seed --force run in a running sutlab container, which has the database's URL), then its
# Redis flushed: the replicas keep running, and the next listing reads the new rows.
c_reseed() {
  local ctr
  c_load || die "no container lab is up (infra/lab up --containers)"
  c_engine_present || die "podman is not installed"
  c_use_conf
  ctr=$(podman ps --filter "label=io.podman.compose.project=$C_PROJECT" --filter status=running \
        --format '{{.Names}}' 2>/dev/null | grep -E "_sutlab_[0-9]+\$" | sort | head -n 1)
  [ -n "$ctr" ] || die "no sutlab container of $C_PROJECT is running (infra/lab up --containers)"
  step "seeding ($1) from $ctr, replacing the current data"
  podman exec "$ctr" sutlab db migrate || die "sutlab db migrate failed in $ctr"
  podman exec "$ctr" sutlab db seed --size "$1" --force || die "sutlab db seed failed in $ctr"
  podman exec "$(c_name redis)" redis-cli flushall >/dev/null 2>&1 && say "(Redis cache flushed)"
}

# c_up_count: how many sutlab servers HAProxy sees UP.
c_up_count() { c_lb_states | awk '$2 == "UP"' | wc -l; }

# c_restart: rolling restart of the sutlab containers, one at a time: podman stop sends SIGTERM
# (sutlab closes its listeners, finishes in-flight requests, exits 0), HAProxy ejects it and sends
# its traffic to the others; it is started again and must be back in rotation before the next.
c_restart() {
  local i name t code deadline
  c_load || die "no container lab is up (infra/lab up --containers)"
  c_use_conf
  c_wait_backends "$C_N" 30 || die "not every sutlab container is in rotation: no rolling restart"
  for i in $(seq 1 "$C_N"); do
    name=$(c_name sutlab "$i")
    t=$SECONDS
    podman stop -t 20 "$name" >/dev/null 2>&1 || die "podman stop $name failed"
    code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
    say "sutlab $i: SIGTERM, exited $code after $((SECONDS - t)) s$([ "$code" = 0 ] || echo ' (not a graceful stop)')"
    deadline=$((SECONDS + 5))
    while [ "$(c_up_count)" -ge "$C_N" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    c_podman_start "$name"
    c_wait_backends "$C_N" 30 || die "sutlab $i did not come back into rotation (podman logs $name)"
    podman healthcheck run "$name" >/dev/null 2>&1 || die "sutlab $i: its HEALTHCHECK fails after the restart"
    say "sutlab $i: back in rotation after $((SECONDS - t)) s"
  done
}
