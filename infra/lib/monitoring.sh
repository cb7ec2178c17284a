# shellcheck shell=bash
# The lab's monitoring (`infra/lab up --monitoring`): Debian's Prometheus and exporters, private to
# the checkout, on their own loopback ports:
#
#   Prometheus           127.0.0.1:SUTLAB_LAB_PROM_PORT (9490): the UI and the HTTP API
#   node exporter        127.0.0.1:PROM_PORT+1 (9491): the machine (CPU, memory, network, disks)
#   postgres exporter    127.0.0.1:PROM_PORT+2 (9492): the lab's PostgreSQL (DATA_SOURCE_NAME)
#   redis exporter       127.0.0.1:PROM_PORT+3 (9493): the lab's Redis
#   HAProxy's exporter   127.0.0.1:PROM_PORT+4 (9494): PROMEX, a frontend of the lab's HAProxy
#                        (tier.sh writes it when T_PROMEX is set), where a balancer runs
#
# The netns lab (`up --netns --monitoring`): Prometheus and the node exporter run here, in the root
# namespace (the UI is where a browser is); the PostgreSQL and Redis exporters run in the db
# namespace beside what they watch, HAProxy's exporter in the web one; nsrelay.py (one process,
# pid file nsrelay.pid) joins 127.0.0.1:PORT here to each of them and to every sutlab instance
# (127.0.0.1:PROM_PORT+5.. for instances 1..N), and each target keeps its namespace's address as
# its `instance` label (e.g. sutlab-web/127.0.0.1:8081).
#
# The container lab (`up --containers --monitoring`): everything runs here too, and reaches the
# containers at their addresses on the project's network (reachable from this host with rootful
# podman; only HAProxy's front is published). Those addresses change whenever a container starts
# again (`restart --containers`, a `podman kill` and `start`), so Prometheus finds the sutlab
# replicas and HAProxy (its PROMEX frontend on :8404, infra/deploy/compose/haproxy.cfg) by asking
# podman itself, every 2 s: `podman system service` (program podman-api) serves podman's
# Docker-compatible API on var/monitoring/podman.sock for Prometheus's docker_sd_configs. Each
# replica's `instance` label is its container name (sutlab-lab_sutlab_2), `replica` its number. The
# PostgreSQL and Redis exporters connect to their containers' addresses as they are at `up`;
# `status` starts an exporter again when its container's address has changed since.
#
# Every sutlab instance is scraped every second; the recording rules of infra/deploy/prometheus are
# loaded (evaluated every second too), and `promtool check config` and `check rules` must pass before
# anything starts. Never the packages' default ports (9090, 9100, 9187, 9121), never their own
# services: on a machine with systemd apt may have started those; ours neither use nor collide
# with them.
#
# State in var/monitoring/: prometheus.yml and sutlab-rules.yml (written at every `up` from the
# running lab), data/ (the TSDB, kept by `down`), PROG.pid; logs in var/log/monitoring-PROG.log.
# Sourced by infra/lab after common.sh, tier.sh, netns.sh and containers.sh; uses its VAR, LOGDIR,
# LAB_PORT, BACKEND_PORT, DB_URL, REDIS_URL, and containers.sh's C_PROJECT, C_N, c_name, c_load.
# Nothing here runs on its own.

MON_DIR=$VAR/monitoring
MON_PORT=${SUTLAB_LAB_PROM_PORT:-9490}
case $MON_PORT in ''|*[!0-9]*) die "SUTLAB_LAB_PROM_PORT must be a port number, got '$MON_PORT'" ;; esac
[ "$MON_PORT" -le 65531 ] || die "SUTLAB_LAB_PROM_PORT=$MON_PORT leaves no room for the exporters' four ports after it"
MON_NODE_PORT=$((MON_PORT + 1))
MON_PG_PORT=$((MON_PORT + 2))
MON_REDIS_PORT=$((MON_PORT + 3))
# shellcheck disable=SC2034  # used by infra/lab (scale_tier: T_PROMEX)
MON_HAPROXY_PORT=$((MON_PORT + 4))
# The programs (started in this order; stopped in the reverse one; nsrelay with --netns only).
MON_PROGS=(node-exporter postgres-exporter redis-exporter nsrelay podman-api prometheus)
MON_RELAY=$ROOT/infra/lib/nsrelay.py
# the container lab: podman's Docker-compatible API, for Prometheus's container discovery
MON_PODMAN_SOCK=$MON_DIR/podman.sock
# HAProxy's exporter in the container lab (the frontend "prometheus" of compose/haproxy.cfg)
MON_C_PROMEX_PORT=8404
# Set by mon_up for the netns lab: the namespace the PostgreSQL and Redis exporters run in.
MON_NS=''
# The lab the monitoring watches (process, netns or containers): $MON_DIR/mode, written by mon_up.
MON_MODE=process
MON_RULES_SRC=$ROOT/infra/deploy/prometheus/sutlab-rules.yml

# mon_port PROG: the port PROG listens on.
mon_port() {
  case $1 in
    prometheus) echo "$MON_PORT" ;;
    node-exporter) echo "$MON_NODE_PORT" ;;
    postgres-exporter) echo "$MON_PG_PORT" ;;
    redis-exporter) echo "$MON_REDIS_PORT" ;;
  esac
}

# mon_listen_arg PROG: the argv entry that names our listener (how our processes are told apart).
mon_listen_arg() {
  if [ "$1" = nsrelay ]; then printf '%s\n' "$MON_RELAY"; return 0; fi
  if [ "$1" = podman-api ]; then printf 'unix://%s\n' "$MON_PODMAN_SOCK"; return 0; fi
  printf -- '--web.listen-address=127.0.0.1:%s\n' "$(mon_port "$1")"
}

# mon_pid PROG: pid of our PROG (the pid file's process, with our listener in its argv), if it runs.
mon_pid() {
  local pid
  pid=$(read_pidfile "$MON_DIR/$1.pid") || return 1
  if pid_alive "$pid" && proc_has_arg "$pid" "$(mon_listen_arg "$1")"; then
    printf '%s\n' "$pid"
    return 0
  fi
  return 1
}

# mon_running: any program of the monitoring runs.
mon_running() {
  local p
  for p in "${MON_PROGS[@]}"; do
    mon_pid "$p" >/dev/null && return 0
  done
  return 1
}

mon_url() { printf 'http://127.0.0.1:%s\n' "$MON_PORT"; }

# mon_load_mode: MON_MODE from $MON_DIR/mode (process when none was recorded).
mon_load_mode() {
  MON_MODE=$(cat "$MON_DIR/mode" 2>/dev/null || echo process)
  case $MON_MODE in process|netns|containers) ;; *) MON_MODE=process ;; esac
}

# mon_dsn URL: a PostgreSQL URL for the exporter (lib/pq): sslmode=disable unless the URL says one.
mon_dsn() {
  case $1 in
    *sslmode=*) printf '%s\n' "$1" ;;
    *\?*) printf '%s&sslmode=disable\n' "$1" ;;
    *) printf '%s?sslmode=disable\n' "$1" ;;
  esac
}

# mon_redis_addr URL: redis://HOST:PORT for the exporter (a path or a query dropped).
mon_redis_addr() {
  local u=${1#redis://}
  u=${u%%/*}
  u=${u%%\?*}
  printf 'redis://%s\n' "$u"
}

# mon_targets MODE: what Prometheus scrapes, one "JOB ADDRESS INSTANCE TIER RELAY" line each
# (INSTANCE: the label to show, - for ADDRESS itself; TIER: the sutlab target's tier label, or -;
# RELAY: NAMESPACE:HOST:PORT that nsrelay joins ADDRESS to, or -). MODE process: the running
# process lab (the scaled tier of var/scale, else the single sutlab); netns: the netns lab;
# containers: the container lab, whose sutlab and HAProxy targets Prometheus discovers itself
# (mon_docker_sd_job), so only the exporters and Prometheus are listed.
mon_targets() {
  local i port listen
  if [ "$1" = containers ]; then
    printf 'node 127.0.0.1:%s - - -\npostgres 127.0.0.1:%s - - -\nredis 127.0.0.1:%s - - -\n' \
      "$MON_NODE_PORT" "$MON_PG_PORT" "$MON_REDIS_PORT"
  elif [ "$1" = netns ]; then
    tier_load "$NS_DIR/web" || return 0
    for i in $(seq 1 "$T_N"); do
      port=$((MON_PORT + 4 + i))
      listen=$(tier_listen "$i")
      printf 'sutlab 127.0.0.1:%s %s/%s netns %s:%s\n' "$port" "$T_NS" "$listen" "$T_NS" "$listen"
    done
    if [ "$T_LB" = haproxy ] && [ -n "$T_PROMEX" ]; then
      printf 'haproxy 127.0.0.1:%s %s/%s - %s:%s\n' "$MON_HAPROXY_PORT" "$T_NS" "$T_PROMEX" "$T_NS" "$T_PROMEX"
    fi
    printf 'node 127.0.0.1:%s - - -\n' "$MON_NODE_PORT"
    for port in "$MON_PG_PORT:postgres" "$MON_REDIS_PORT:redis"; do
      printf '%s 127.0.0.1:%s %s/127.0.0.1:%s - %s:127.0.0.1:%s\n' "${port#*:}" "${port%%:*}" "$NS_DB" "${port%%:*}" \
        "$NS_DB" "${port%%:*}"
    done
  else
    if tier_load "$VAR/scale"; then
      for i in $(seq 1 "$T_N"); do
        printf 'sutlab %s - scaled -\n' "$(tier_listen "$i")"
      done
      if [ "$T_LB" = haproxy ] && [ -n "$T_PROMEX" ]; then
        printf 'haproxy %s - - -\n' "$T_PROMEX"
      fi
    else
      port=$(cat "$SUTLAB_PORT_FILE" 2>/dev/null || echo "$LAB_PORT")
      printf 'sutlab 127.0.0.1:%s - single -\n' "$port"
    fi
    printf 'node 127.0.0.1:%s - - -\npostgres 127.0.0.1:%s - - -\nredis 127.0.0.1:%s - - -\n' \
      "$MON_NODE_PORT" "$MON_PG_PORT" "$MON_REDIS_PORT"
  fi
  printf 'prometheus 127.0.0.1:%s - - -\n' "$MON_PORT"
}

# mon_write_config MODE: var/monitoring/prometheus.yml for the running lab (mon_targets), targets.txt
# (mon_targets' lines) and the rules beside it (the group's interval set to 1 s: evaluated as often
# as the scrapes come).
mon_write_config() {
  local job addr inst tier relay j
  mkdir -p "$MON_DIR/data"
  sed -E 's/^( *interval:).*/\1 1s/' "$MON_RULES_SRC" > "$MON_DIR/sutlab-rules.yml"
  mon_targets "$1" > "$MON_DIR/targets.txt"
  {
    cat <<EOF
# written by infra/lab up --monitoring (rewritten at every up) for the lab that runs now ($1)
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s

rule_files:
  - sutlab-rules.yml

scrape_configs:
EOF
    for j in sutlab haproxy node postgres redis prometheus; do
      if [ "$1" = containers ]; then
        case $j in
          sutlab) mon_docker_sd_job sutlab sutlab 8080; continue ;;
          haproxy) mon_docker_sd_job haproxy haproxy "$MON_C_PROMEX_PORT"; continue ;;
        esac
      fi
      grep -q "^$j " "$MON_DIR/targets.txt" || continue
      printf '  - job_name: %s\n    metrics_path: /metrics\n    static_configs:\n' "$j"
      while read -r job addr inst tier relay; do
        [ "$job" = "$j" ] || continue
        printf '      - targets: ["%s"]\n' "$addr"
        if [ "$inst" != - ] || [ "$tier" != - ]; then
          printf '        labels:\n'
          [ "$inst" = - ] || printf '          instance: "%s"\n' "$inst"
          [ "$tier" = - ] || printf '          tier: %s\n' "$tier"
        fi
      done < "$MON_DIR/targets.txt"
    done
  } > "$MON_DIR/prometheus.yml"
}

# mon_docker_sd_job JOB SERVICE PORT: a scrape job for the container lab's running containers of the
# compose service SERVICE (C_PROJECT's, on its one network: podman's API gives no network names for
# Prometheus's __meta_docker_network_name), at ADDRESS:PORT, found through podman's
# Docker-compatible API (podman-api). Labels: instance = the container's name, tier = containers,
# and for sutlab replica = its number (com.docker.compose.container-number, podman-compose's label).
mon_docker_sd_job() {
  cat <<EOF
  - job_name: $1
    metrics_path: /metrics
    docker_sd_configs:
      - host: unix://$MON_PODMAN_SOCK
        port: $3
        refresh_interval: 2s
        filters:
          - name: label
            values: ["io.podman.compose.project=$C_PROJECT"]
    relabel_configs:
      - source_labels: [__meta_docker_container_label_com_docker_compose_service]
        regex: $2
        action: keep
      - source_labels: [__meta_docker_network_ip]
        regex: (.+)
        replacement: \${1}:$3
        target_label: __address__
      - source_labels: [__meta_docker_container_name]
        regex: /?(.+)
        target_label: instance
      - target_label: tier
        replacement: containers
EOF
  [ "$1" != sutlab ] || cat <<EOF
      - source_labels: [__meta_docker_container_label_com_docker_compose_container_number]
        target_label: replica
EOF
}

# mon_c_addr SERVICE: the address of the container lab's SERVICE container on its network.
mon_c_addr() {
  podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$(c_name "$1")" 2>/dev/null |
    awk '{ print $1 }'
}

# mon_c_pg_password: POSTGRES_PASSWORD of the container lab's PostgreSQL (the compose file's default
# unless the environment of `up` set another).
mon_c_pg_password() {
  podman inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$(c_name postgres)" 2>/dev/null |
    sed -n 's/^POSTGRES_PASSWORD=//p' | head -n 1
}

# mon_c_follow: (container lab) start the PostgreSQL or Redis exporter again when its container's
# address is not the one it was started with ($MON_DIR/PROG.addr): the container started again.
# 1 when none was started again.
mon_c_follow() {
  local prog svc addr rc=1
  for prog in postgres-exporter redis-exporter; do
    svc=${prog%-exporter}
    mon_pid "$prog" >/dev/null || continue
    addr=$(mon_c_addr "$svc")
    [ -n "$addr" ] || continue
    [ "$addr" != "$(cat "$MON_DIR/$prog.addr" 2>/dev/null)" ] || continue
    say "(the $svc container's address is now $addr: starting $prog again)"
    mon_stop "$prog"
    mon_start "$prog" || warn "$prog did not start again (log: $LOGDIR/monitoring-$prog.log)"
    rc=0
  done
  return "$rc"
}

# mon_check: promtool on the config and the rules; a failure stops `up` with promtool's lines.
mon_check() {
  local out
  out=$(promtool check config "$MON_DIR/prometheus.yml" 2>&1) ||
    die "promtool check config $MON_DIR/prometheus.yml failed: $(printf '%s' "$out" | tail -n 5 | paste -sd ' ')"
  out=$(promtool check rules "$MON_DIR/sutlab-rules.yml" 2>&1) ||
    die "promtool check rules $MON_DIR/sutlab-rules.yml failed: $(printf '%s' "$out" | tail -n 5 | paste -sd ' ')"
}

# mon_relays_listen: every relay port of targets.txt accepts connections.
mon_relays_listen() {
  local addr relay
  while read -r _ addr _ _ relay; do
    [ "$relay" = - ] || port_in_use "${addr##*:}" || return 1
  done < "$MON_DIR/targets.txt"
}

# mon_start PROG: start PROG in the background (its own session), wait until it answers.
mon_start() {
  local prog=$1 port log pid deadline path=/metrics addr relay in_ns='' db_url redis_url
  db_url=${DB_URL:-} redis_url=${REDIS_URL:-}
  port=$(mon_port "$prog")
  log=$LOGDIR/monitoring-$prog.log
  mkdir -p "$LOGDIR" "$MON_DIR"
  if [ -n "$MON_NS" ]; then
    db_url="postgresql://postgres@127.0.0.1:$NS_PG_PORT/sutlab" redis_url="redis://127.0.0.1:$NS_REDIS_PORT"
  fi
  if [ "$MON_MODE" = containers ]; then
    case $prog in
      postgres-exporter|redis-exporter)
        addr=$(mon_c_addr "${prog%-exporter}")
        [ -n "$addr" ] || { say "the ${prog%-exporter} container of $C_PROJECT has no address (is it running?)"; return 1; }
        printf '%s\n' "$addr" > "$MON_DIR/$prog.addr"
        db_url="postgresql://postgres:$(mon_c_pg_password)@$addr:5432/sutlab" redis_url="redis://$addr:6379" ;;
    esac
  fi
  if [ -n "$port" ] && port_in_use "$port"; then
    die "port $port (for $prog) is already in use by another program: set SUTLAB_LAB_PROM_PORT (Prometheus; the exporters use the four ports after it)"
  fi
  set -- "$(mon_listen_arg "$prog")"
  case $prog in
    prometheus)
      path=/-/ready
      set -- prometheus --config.file="$MON_DIR/prometheus.yml" --storage.tsdb.path="$MON_DIR/data" \
        --storage.tsdb.retention.time=30d "$@" ;;
    node-exporter) set -- prometheus-node-exporter "$@" ;;
    postgres-exporter) set -- prometheus-postgres-exporter "$@" ;;
    redis-exporter) set -- prometheus-redis-exporter --redis.addr="$(mon_redis_addr "$redis_url")" "$@" ;;
    podman-api)
      port='' path=''
      rm -f "$MON_PODMAN_SOCK"
      set -- podman system service --time=0 "$@" ;;
    nsrelay)
      port='' path=''
      set -- /usr/bin/python3 "$MON_RELAY"
      while read -r _ addr _ _ relay; do
        [ "$relay" = - ] || set -- "$@" "${addr##*:}=$relay"
      done < "$MON_DIR/targets.txt"
      ;;
  esac
  # the PostgreSQL and Redis exporters of the netns lab run in its db namespace
  case $prog in postgres-exporter|redis-exporter) [ -z "$MON_NS" ] || { set -- ip netns exec "$MON_NS" "$@"; in_ns=$MON_NS; } ;; esac
  printf '\n===== %s infra/lab: %s\n' "$(date '+%F %T')" "$*" >> "$log"
  step "starting $prog${port:+ on 127.0.0.1:$port}${in_ns:+ in namespace $in_ns}"
  (
    for v in $(compgen -e); do
      case $v in SUTLAB_*) unset "$v" ;; esac
    done
    cd "$MON_DIR" || exit 1
    if [ "$prog" = postgres-exporter ]; then
      DATA_SOURCE_NAME=$(mon_dsn "$db_url")
      export DATA_SOURCE_NAME
    fi
    exec setsid "$@"
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" > "$MON_DIR/$prog.pid"
  deadline=$((SECONDS + 30))
  while :; do
    if ! pid_alive "$pid"; then
      rm -f "$MON_DIR/$prog.pid"
      say "$prog exited during start-up; last lines of $log:"
      tail -n 20 "$log"
      return 1
    fi
    if [ "$prog" = podman-api ]; then
      curl -fsS -o /dev/null --max-time 1 --unix-socket "$MON_PODMAN_SOCK" http://podman/_ping 2>/dev/null && return 0
    elif [ -z "$port" ]; then   # nsrelay: its listeners are all made before it says so
      mon_relays_listen && return 0
    elif [ -n "$in_ns" ]; then
      ip netns exec "$in_ns" curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port$path" 2>/dev/null && return 0
    else
      curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port$path" 2>/dev/null && return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      say "$prog did not answer ${port:+on 127.0.0.1:$port }within 30 s; last lines of $log:"
      tail -n 20 "$log"
      mon_stop "$prog"
      return 1
    fi
    sleep 0.2
  done
}

mon_stop() {
  local pid
  if pid=$(mon_pid "$1"); then
    step "stopping $1 (pid $pid)"
    stop_pid "$pid" 15
  fi
  rm -f "$MON_DIR/$1.pid"
  case $1 in
    podman-api) rm -f "$MON_PODMAN_SOCK" ;;
    postgres-exporter|redis-exporter) rm -f "$MON_DIR/$1.addr" ;;
  esac
}

# mon_down: stop every program of the monitoring (the data stays in var/monitoring/data).
mon_down() {
  local i
  for ((i = ${#MON_PROGS[@]} - 1; i >= 0; i--)); do
    mon_stop "${MON_PROGS[i]}"
  done
}

# mon_targets_view: "JOB INSTANCE HEALTH [LAST ERROR]" per active target, from Prometheus's API.
mon_targets_view() {
  curl -fsS --max-time 3 "$(mon_url)/api/v1/targets?state=active" 2>/dev/null |
    /usr/bin/python3 -c '
import json, sys
for t in sorted(json.load(sys.stdin)["data"]["activeTargets"], key=lambda t: (t["labels"]["job"], t["labels"]["instance"])):
    print(t["labels"]["job"], t["labels"]["instance"], t["health"], t.get("lastError") or "")
' 2>/dev/null || true
}

# mon_wait_targets SECONDS [MIN]: until every target is up, and at least MIN of them (targets found
# by discovery come a moment after the start); 1 if not by then.
mon_wait_targets() {
  local deadline=$((SECONDS + $1)) min=${2:-1} view
  while :; do
    view=$(mon_targets_view)
    if [ -n "$view" ] && [ "$(printf '%s\n' "$view" | wc -l)" -ge "$min" ] &&
       ! printf '%s\n' "$view" | awk '$3 != "up" { bad = 1 } END { exit !bad }'; then
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# mon_up: (re)start the monitoring for the lab that runs now, print its URL and targets.
mon_up() {
  local mode=${1:-process} p addr relay min
  command -v prometheus >/dev/null || die "prometheus is not installed (infra/lab up --monitoring installs it)"
  mon_down
  MON_NS='' MON_MODE=$mode
  [ "$mode" = netns ] && MON_NS=$NS_DB
  mkdir -p "$MON_DIR"
  printf '%s\n' "$mode" > "$MON_DIR/mode"
  mon_write_config "$mode"
  mon_check
  while read -r _ addr _ _ relay; do
    if [ "$relay" != - ] && [ "${addr##*:}" -gt "$MON_HAPROXY_PORT" ] && port_in_use "${addr##*:}"; then
      die "port ${addr##*:} (a relay of the netns lab's monitoring) is already in use by another program: set SUTLAB_LAB_PROM_PORT"
    fi
  done < "$MON_DIR/targets.txt"
  for p in "${MON_PROGS[@]}"; do
    [ "$p" != nsrelay ] || [ "$mode" = netns ] || continue
    [ "$p" != podman-api ] || [ "$mode" = containers ] || continue
    mon_start "$p" || { mon_down; die "the monitoring did not start (logs: $LOGDIR/monitoring-*.log)"; }
  done
  # the container lab: its N sutlab containers and HAProxy besides the four static targets
  min=1
  [ "$mode" != containers ] || min=$((C_N + 5))
  mon_wait_targets 15 "$min" || warn "not every target is up yet (infra/lab status shows them)"
  say ""
  say "Prometheus: $(mon_url)   (targets: $(mon_url)/targets, graph: $(mon_url)/graph)"
  say "  e.g. sum(rate(http_requests_total[10s])), sutlab:http_requests:rate1m; every target scraped each second"
  [ "$mode" != containers ] ||
    say "  each sutlab container by name (instance) and number (replica): sum by (replica) (rate(http_requests_total[10s]))"
  mon_status "  "
}

# mon_status INDENT: the programs, and each target's health as Prometheus sees it.
mon_status() {
  local ind=${1:-} p pid job inst health err
  if ! mon_running; then
    [ -d "$MON_DIR/data" ] && say "${ind}monitoring  stopped  (Prometheus data kept in $MON_DIR/data)"
    return 0
  fi
  mon_load_mode
  if [ "$MON_MODE" = containers ] && c_load && c_engine_present; then
    c_use_conf
    # a restarted exporter: its target's health once Prometheus has scraped it again
    if mon_c_follow; then mon_wait_targets 5 || true; fi
  fi
  for p in "${MON_PROGS[@]}"; do
    if pid=$(mon_pid "$p"); then
      if [ "$p" = nsrelay ]; then
        say "${ind}$(printf '%-18s' "$p") running  pid $pid  (into the netns lab's namespaces)"
      elif [ "$p" = podman-api ]; then
        say "${ind}$(printf '%-18s' "$p") running  pid $pid  unix://$MON_PODMAN_SOCK  (finds the containers for Prometheus)"
      elif [ -f "$MON_DIR/$p.addr" ]; then
        say "${ind}$(printf '%-18s' "$p") running  pid $pid  http://127.0.0.1:$(mon_port "$p")  (watching $(cat "$MON_DIR/$p.addr"))"
      else
        say "${ind}$(printf '%-18s' "$p") running  pid $pid  http://127.0.0.1:$(mon_port "$p")"
      fi
    elif [ "$p" != nsrelay ] && [ "$p" != podman-api ]; then
      say "${ind}$(printf '%-18s' "$p") stopped  port $(mon_port "$p")"
    fi
  done
  while read -r job inst health err; do
    [ -n "$job" ] || continue
    say "${ind}  target $(printf '%-10s %-22s' "$job" "$inst") $health${err:+  ($err)}"
  done < <(mon_targets_view)
}
