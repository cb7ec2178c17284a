# shellcheck shell=bash
# The scaled web tier of the lab: N sutlab instances behind HAProxy or nginx, or one sutlab listening
# on the front address itself. It runs in the root network namespace (`infra/lab up --instances N
# --lb haproxy|nginx`) or in the web namespace of the netns lab (`infra/lab up --netns ...`).
# Sourced by infra/lab after common.sh; uses its LOGDIR. Nothing here runs on its own.
#
# A tier lives in a state directory whose tier.conf records how it was started; tier_load DIR reads
# it into the T_* variables every other function here uses:
#   T_DIR         the state directory: tier.conf, sutlab-I.pid, lb.pid, haproxy.cfg or nginx/
#   T_LOGPFX      log files are $LOGDIR/$T_LOGPFX-sutlab-I.log and $LOGDIR/$T_LOGPFX-LB.log
#   T_NS          network namespace the tier runs in ('' = the root one)
#   T_CHECK_NS    namespace the front is checked from ('' = root; the client one in the netns lab)
#   T_BIN         the sutlab binary
#   T_N           number of sutlab instances
#   T_LB          haproxy | nginx | none (none: instance 1 listens on the front address itself)
#   T_FRONT_HOST  T_FRONT_PORT: where clients connect
#   T_BACK_PORT   instance I listens on 127.0.0.1:(T_BACK_PORT + I - 1) of T_NS
#   T_DB_URL      T_REDIS_URL: what every instance uses
#   T_PROMEX      HOST:PORT of HAProxy's Prometheus exporter (PROMEX), a frontend of its own; '' = none
#                 (infra/lab up --monitoring, infra/lib/monitoring.sh)
#   T_LB_CPUS     the balancer's CPU budget: the cores it runs on (taskset -c LIST), as many nginx
#                 workers or HAProxy threads as there are cores in it; '' = no budget (every core,
#                 nginx's worker_processes auto)

T_DIR='' T_LOGPFX='' T_NS='' T_CHECK_NS='' T_BIN='' T_N=0 T_LB=none T_FRONT_HOST='' T_FRONT_PORT='' T_BACK_PORT=''
T_DB_URL='' T_REDIS_URL='' T_PROMEX='' T_LB_CPUS='' T_FRONT_ALSO=''

# Path of the HAProxy statistics page on the front (";csv" appended gives CSV).
LB_STATS_URI=/_lb/haproxy

tier_conf_write() {
  mkdir -p "$T_DIR"
  {
    printf 'LOGPFX=%s\nNS=%s\nCHECK_NS=%s\nBIN=%s\nN=%s\nLB=%s\n' \
      "$T_LOGPFX" "$T_NS" "$T_CHECK_NS" "$T_BIN" "$T_N" "$T_LB"
    printf 'FRONT_HOST=%s\nFRONT_PORT=%s\nBACK_PORT=%s\nDB_URL=%s\nREDIS_URL=%s\nPROMEX=%s\nLB_CPUS=%s\n' \
      "$T_FRONT_HOST" "$T_FRONT_PORT" "$T_BACK_PORT" "$T_DB_URL" "$T_REDIS_URL" "$T_PROMEX" "$T_LB_CPUS"
    printf 'FRONT_ALSO=%s\n' "$T_FRONT_ALSO"
  } > "$T_DIR/tier.conf"
}

# tier_load DIR: the tier recorded in DIR/tier.conf (1 if there is none).
tier_load() {
  local k v
  T_DIR=$1
  T_PROMEX='' T_LB_CPUS='' T_FRONT_ALSO=''
  [ -f "$T_DIR/tier.conf" ] || return 1
  while IFS='=' read -r k v; do
    case $k in
      LOGPFX) T_LOGPFX=$v ;; NS) T_NS=$v ;; CHECK_NS) T_CHECK_NS=$v ;; BIN) T_BIN=$v ;;
      N) T_N=$v ;; LB) T_LB=$v ;; FRONT_HOST) T_FRONT_HOST=$v ;; FRONT_PORT) T_FRONT_PORT=$v ;;
      BACK_PORT) T_BACK_PORT=$v ;; DB_URL) T_DB_URL=$v ;; REDIS_URL) T_REDIS_URL=$v ;; PROMEX) T_PROMEX=$v ;;
      LB_CPUS) T_LB_CPUS=$v ;; FRONT_ALSO) T_FRONT_ALSO=$v ;;
    esac
  done < "$T_DIR/tier.conf"
  case $T_N in ''|*[!0-9]*) T_N=0 ;; esac
  return 0
}

# tier_run CMD...: CMD inside the tier's namespace; tier_check_run: where the front is checked from.
tier_run() {
  if [ -n "$T_NS" ]; then ip netns exec "$T_NS" "$@"; else "$@"; fi
}
tier_check_run() {
  if [ -n "$T_CHECK_NS" ]; then ip netns exec "$T_CHECK_NS" "$@"; else "$@"; fi
}

tier_front() { printf '%s:%s\n' "$T_FRONT_HOST" "$T_FRONT_PORT"; }

# tier_front_also: the second HOST:PORT the front listens on (infra/lab up --listen ADDR), or
# nothing. The lab's own checks and tools keep to tier_front (loopback).
tier_front_also() { [ -z "$T_FRONT_ALSO" ] || printf '%s:%s\n' "$T_FRONT_ALSO" "$T_FRONT_PORT"; }

# tier_listen I: the HOST:PORT instance I listens on.
tier_listen() {
  if [ "$T_LB" = none ]; then
    tier_front
  else
    printf '127.0.0.1:%s\n' "$((T_BACK_PORT + $1 - 1))"
  fi
}

# tier_port_open HOST PORT: something accepts TCP connections on HOST:PORT, seen from T_NS.
tier_port_open() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  tier_run bash -c ': 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# tier_http_code RUNNER URL: the HTTP status of a GET (000 when nothing answers).
tier_http_code() {
  local runner=$1 url=$2 code
  code=$("$runner" curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" 2>/dev/null) || true
  printf '%s\n' "${code:-000}"
}

# ---- instances --------------------------------------------------------------------------------------

tier_instance_pid() {
  local pid
  pid=$(read_pidfile "$T_DIR/sutlab-$1.pid") || return 1
  if pid_alive "$pid" && proc_has_arg "$pid" "$T_BIN" && proc_has_arg "$pid" "$(tier_listen "$1")"; then
    printf '%s\n' "$pid"
    return 0
  fi
  return 1
}

# tier_start_instance I FLAGS...: start instance I in the background, wait for its /health_check.
tier_start_instance() {
  local i=$1 listen log pid deadline
  shift
  listen=$(tier_listen "$i")
  log=$LOGDIR/$T_LOGPFX-sutlab-$i.log
  [ -x "$T_BIN" ] || { warn "$T_BIN is missing"; return 1; }
  if tier_instance_pid "$i" >/dev/null; then
    say "sutlab $i already running on $listen"
    return 0
  fi
  if tier_port_open "${listen%:*}" "${listen##*:}"; then
    warn "$listen${T_NS:+ (namespace $T_NS)} is already in use by another program (ports: SUTLAB_LAB_PORT, SUTLAB_LAB_BACKEND_PORT)"
    return 1
  fi
  mkdir -p "$LOGDIR" "$T_DIR"
  printf '\n===== %s infra/lab: %s%s serve --listen %s --db-url %s --redis-url %s %s\n' \
    "$(date '+%F %T')" "${T_NS:+ip netns exec $T_NS }" "$T_BIN" "$listen" "$T_DB_URL" "$T_REDIS_URL" "$*" >> "$log"
  step "starting sutlab $i on $listen${T_NS:+ in namespace $T_NS}${*:+ with $*}"
  (
    for v in $(compgen -e); do
      case $v in SUTLAB_LAB_*) unset "$v" ;; esac
    done
    # ip netns exec and setsid both exec (no fork): $! stays the server's pid.
    if [ -n "$T_NS" ]; then
      exec ip netns exec "$T_NS" setsid "$T_BIN" serve --listen "$listen" --db-url "$T_DB_URL" --redis-url "$T_REDIS_URL" "$@"
    fi
    exec setsid "$T_BIN" serve --listen "$listen" --db-url "$T_DB_URL" --redis-url "$T_REDIS_URL" "$@"
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" > "$T_DIR/sutlab-$i.pid"
  deadline=$((SECONDS + 15))
  while :; do
    if ! pid_alive "$pid"; then
      rm -f "$T_DIR/sutlab-$i.pid"
      say "sutlab $i exited during start-up; last lines of $log:"
      tail -n 20 "$log"
      return 1
    fi
    [ "$(tier_http_code tier_run "http://$listen/health_check")" = 200 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      say "sutlab $i did not answer /health_check within 15 s; last lines of $log:"
      tail -n 20 "$log"
      tier_stop_instance "$i"
      return 1
    fi
    sleep 0.1
  done
}

tier_stop_instance() {
  local pid
  if pid=$(tier_instance_pid "$1"); then
    step "stopping sutlab $1 (pid $pid)"
    stop_pid "$pid" 10
  fi
  rm -f "$T_DIR/sutlab-$1.pid"
}

# ---- load balancer ----------------------------------------------------------------------------------

# cpu_list_count LIST: how many cores a taskset list (0, 0-1, 0,2-3) names; 1 if it is malformed.
cpu_list_count() {
  local part lo hi n=0
  local IFS=,
  for part in $1; do
    case $part in
      *-*) lo=${part%-*} hi=${part#*-} ;;
      *) lo=$part hi=$part ;;
    esac
    case $lo$hi in ''|*[!0-9]*) return 1 ;; esac
    [ "$hi" -ge "$lo" ] || return 1
    n=$((n + hi - lo + 1))
  done
  [ "$n" -gt 0 ] || return 1
  printf '%s\n' "$n"
}

# tier_lb_workers: the nginx workers / HAProxy threads of the balancer's CPU budget, one a core
# (what nginx's `auto` gives on a machine of that many vCPUs: the delivery write-up doubled its
# nginx from 1 vCPU to 2, and read two workers at 59 % and 57 %); '' without a budget.
tier_lb_workers() {
  [ -n "$T_LB_CPUS" ] || return 0
  cpu_list_count "$T_LB_CPUS"
}

tier_lb_conf() {
  case $T_LB in
    haproxy) printf '%s\n' "$T_DIR/haproxy.cfg" ;;
    nginx) printf '%s\n' "$T_DIR/nginx/nginx.conf" ;;
    *) return 1 ;;
  esac
}

tier_lb_pid() {
  local pid conf cmdline
  conf=$(tier_lb_conf) || return 1
  pid=$(read_pidfile "$T_DIR/lb.pid") || return 1
  # nginx rewrites its argv ("nginx: master process ..."): look for the config path in it.
  # (No `| grep -q` in this file: with pipefail, grep quitting early can fail the pipeline.)
  cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || cmdline=
  if pid_alive "$pid" && proc_comm_is "$pid" "$T_LB" && [[ $cmdline == *"$conf"* ]]; then
    printf '%s\n' "$pid"
    return 0
  fi
  return 1
}

tier_write_haproxy() {
  local i maxconn hard
  # Two descriptors per proxied connection: stay within what this shell may raise the limit to.
  hard=$(ulimit -Hn)
  maxconn=20000
  if [ "$hard" != unlimited ] && [ $(( (hard - 100) / 2 )) -lt "$maxconn" ]; then
    maxconn=$(( (hard - 100) / 2 ))
  fi
  {
    cat <<EOF
# written by infra/lab (rewritten on every start): the ALB of the write-ups
global
    maxconn $maxconn
EOF
    # a CPU budget (infra/lab up --lb-cpus): one thread a core of it
    if [ -n "$T_LB_CPUS" ]; then printf '    nbthread %s\n' "$(tier_lb_workers)"; fi
    cat <<EOF
    # alerts (server DOWN/UP) go to stderr, i.e. the log file

defaults
    mode http
    maxconn $maxconn
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    # a check waits like a request: a backend as slow as PHP (--app-cpu-us) queues /readyz behind
    # its clients for seconds, and at 2s HAProxy ejected the one server of case php-fpm's ALB
    # stage and answered 503 to all; a stopped backend still fails at once (connection refused)
    timeout check 10s
    # a connection refused by a stopped backend is retried on another one at once
    retries 2
    retry-on conn-failure empty-response
    option redispatch 1

frontend sutlab
    bind $(tier_front)$([ -z "$T_FRONT_ALSO" ] || printf '\n    bind %s' "$(tier_front_also)")
    default_backend sutlab
    # statistics (the backends as HAProxy sees them): $LB_STATS_URI, CSV: $LB_STATS_URI;csv
    stats enable
    stats uri $LB_STATS_URI
    stats refresh 5s

backend sutlab
    balance roundrobin
    # health check on /readyz: a backend that is stopped, or whose PostgreSQL is down, is ejected
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    default-server check inter 1s fall 2 rise 2
    http-response set-header X-Sutlab-Backend %[srv_name]
EOF
    for i in $(seq 1 "$T_N"); do
      printf '    server s%s %s\n' "$i" "$(tier_listen "$i")"
    done
    if [ -n "$T_PROMEX" ]; then
      cat <<EOF

# HAProxy's own Prometheus exporter (PROMEX; infra/lab up --monitoring scrapes it)
frontend prometheus
    bind $T_PROMEX
    http-request use-service prometheus-exporter if { path /metrics }
    no log
EOF
    fi
  } > "$T_DIR/haproxy.cfg"
}

tier_write_nginx() {
  local d=$T_DIR/nginx i workers
  # a CPU budget (infra/lab up --lb-cpus): one worker a core of it, else one a core of the machine
  workers=$(tier_lb_workers)
  mkdir -p "$d"
  {
    cat <<EOF
# written by infra/lab (rewritten on every start): nginx in front of the app servers, with gzip and
# keep-alive connections to the upstreams, as in the delivery write-up
worker_processes ${workers:-auto};
pid $d/nginx.pid;
error_log $d/error.log warn;

events {
    worker_connections 8192;
}

http {
    access_log off;
    server_tokens off;
    keepalive_timeout 10s;
    keepalive_requests 100000;
    default_type application/octet-stream;

    client_body_temp_path $d/client_body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;

    gzip on;
    gzip_comp_level 1;
    gzip_min_length 256;
    gzip_proxied any;
    gzip_vary on;
    gzip_types application/json text/plain text/css application/javascript;

    upstream sutlab {
EOF
    for i in $(seq 1 "$T_N"); do
      printf '        server %s max_fails=1 fail_timeout=2s;\n' "$(tier_listen "$i")"
    done
    cat <<EOF
        # idle keep-alive connections to the upstreams, closed before sutlab's own 10 s timeout
        keepalive 64;
        keepalive_requests 100000;
        keepalive_timeout 5s;
    }

    server {
        listen $(tier_front) backlog=1024;$([ -z "$T_FRONT_ALSO" ] || printf '\n        listen %s backlog=1024;' "$(tier_front_also)")

        location / {
            proxy_pass http://sutlab;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_connect_timeout 2s;
            # a stopped backend (connection refused) is skipped for fail_timeout
            proxy_next_upstream error timeout http_502;
            add_header X-Sutlab-Backend \$upstream_addr always;
        }
    }
}
EOF
  } > "$d/nginx.conf"
}

tier_start_lb() {
  local conf log pid deadline out
  log=$LOGDIR/$T_LOGPFX-$T_LB.log
  mkdir -p "$LOGDIR"
  if tier_lb_pid >/dev/null; then
    tier_stop_lb
  fi
  if tier_port_open "$T_FRONT_HOST" "$T_FRONT_PORT"; then
    warn "$(tier_front)${T_NS:+ (namespace $T_NS)} is already in use by another program: stop it or set SUTLAB_LAB_PORT"
    return 1
  fi
  case $T_LB in
    haproxy)
      command -v haproxy >/dev/null || { warn "haproxy is not installed (apt-get install haproxy)"; return 1; }
      tier_write_haproxy
      conf=$T_DIR/haproxy.cfg
      out=$(tier_run haproxy -c -q -f "$conf" 2>&1) || { warn "haproxy rejects $conf: $out"; return 1; }
      ;;
    nginx)
      command -v nginx >/dev/null || { warn "nginx is not installed (apt-get install nginx-light)"; return 1; }
      tier_write_nginx
      conf=$T_DIR/nginx/nginx.conf
      # nginx -t binds the listeners: test inside the tier's namespace
      out=$(tier_run nginx -t -q -p "$T_DIR/nginx/" -c "$conf" -e "$T_DIR/nginx/error.log" 2>&1) ||
        { warn "nginx rejects $conf: $out"; return 1; }
      ;;
    *) warn "unknown load balancer '$T_LB'"; return 1 ;;
  esac
  printf '\n===== %s infra/lab: %s on %s, config %s\n' "$(date '+%F %T')" "$T_LB" "$(tier_front)" "$conf" >> "$log"
  step "starting $T_LB on $(tier_front)${T_NS:+ in namespace $T_NS} -> $T_N backends${T_LB_CPUS:+, on cores $T_LB_CPUS}"
  (
    if [ "$T_LB" = haproxy ]; then
      set -- haproxy -f "$conf" -db
    else
      set -- nginx -p "$T_DIR/nginx/" -c "$conf" -e "$T_DIR/nginx/error.log" -g 'daemon off;'
    fi
    # the balancer's CPU budget: its workers (threads) inherit the cores
    if [ -n "$T_LB_CPUS" ]; then set -- taskset -c "$T_LB_CPUS" "$@"; fi
    if [ -n "$T_NS" ]; then
      exec ip netns exec "$T_NS" setsid "$@"
    fi
    exec setsid "$@"
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" > "$T_DIR/lb.pid"
  deadline=$((SECONDS + 15))
  while :; do
    if ! pid_alive "$pid"; then
      rm -f "$T_DIR/lb.pid"
      say "$T_LB exited during start-up; last lines of $log:"
      tail -n 20 "$log"
      return 1
    fi
    [ "$(tier_http_code tier_check_run "http://$(tier_front)/health_check")" = 200 ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      say "$T_LB did not answer /health_check within 15 s; last lines of $log:"
      tail -n 20 "$log"
      tier_stop_lb
      return 1
    fi
    sleep 0.1
  done
}

tier_stop_lb() {
  local pid
  if pid=$(tier_lb_pid); then
    step "stopping $T_LB (pid $pid)"
    stop_pid "$pid" 10
  fi
  rm -f "$T_DIR/lb.pid"
}

# ---- the whole tier -----------------------------------------------------------------------------------

# tier_up FLAGS...: start the tier described by the T_* variables (any previous one is stopped first
# by the caller: tier_down). On failure everything started is stopped again and 1 is returned.
tier_up() {
  local i listen
  # Every port first: a busy one stops the start before anything runs.
  if [ "$T_LB" != none ] && tier_port_open "$T_FRONT_HOST" "$T_FRONT_PORT"; then
    warn "$(tier_front)${T_NS:+ (namespace $T_NS)} is already in use by another program: stop it or set SUTLAB_LAB_PORT"
    return 1
  fi
  for i in $(seq 1 "$T_N"); do
    listen=$(tier_listen "$i")
    if tier_port_open "${listen%:*}" "${listen##*:}"; then
      warn "$listen${T_NS:+ (namespace $T_NS)} is already in use by another program (ports: SUTLAB_LAB_PORT, SUTLAB_LAB_BACKEND_PORT)"
      return 1
    fi
  done
  tier_conf_write
  for i in $(seq 1 "$T_N"); do
    tier_start_instance "$i" "$@" || { tier_down; return 1; }
  done
  if [ "$T_LB" != none ]; then
    tier_start_lb || { tier_down; return 1; }
    # HAProxy: until its first health checks have passed (status then shows every backend UP)
    if [ "$T_LB" = haproxy ]; then
      for i in $(seq 1 "$T_N"); do tier_wait_in_rotation "$i"; done
    fi
  fi
}

# tier_down: stop the LB, then every instance this tier ever started; forget the tier.
tier_down() {
  local f i
  [ -f "$T_DIR/tier.conf" ] || return 0
  [ "$T_LB" != none ] && tier_stop_lb
  for f in "$T_DIR"/sutlab-*.pid; do
    [ -e "$f" ] || continue
    i=${f##*/sutlab-}
    i=${i%.pid}
    case $i in ''|*[!0-9]*) rm -f "$f"; continue ;; esac
    tier_stop_instance "$i"
  done
  rm -f "$T_DIR/tier.conf"
}

# tier_running: the front or at least one instance runs.
tier_running() {
  local i
  [ -f "$T_DIR/tier.conf" ] || return 1
  tier_lb_pid >/dev/null && return 0
  for i in $(seq 1 "$T_N"); do
    tier_instance_pid "$i" >/dev/null && return 0
  done
  return 1
}

# tier_wait_in_rotation I: wait until the LB sends traffic to instance I again (HAProxy: its health
# check says UP; nginx: the fail_timeout of a backend that refused connections has passed).
tier_wait_in_rotation() {
  local n=100
  case $T_LB in
    haproxy)
      while [ "$n" -gt 0 ]; do
        [[ $'\n'$(tier_lb_view)$'\n' == *$'\n'"s$1 UP"$'\n'* ]] && return 0
        sleep 0.1
        n=$((n - 1))
      done
      warn "haproxy does not see sutlab $1 UP after 10 s"
      ;;
    nginx) sleep 2 ;;
  esac
  return 0
}

# tier_restart FLAGS...: restart the instances one after the other; behind a LB, each is back in
# rotation before the next one stops, so the front keeps answering.
tier_restart() {
  local i
  for i in $(seq 1 "$T_N"); do
    tier_stop_instance "$i"
    tier_start_instance "$i" "$@" || return 1
    if [ "$T_N" -gt 1 ] && tier_lb_pid >/dev/null; then
      tier_wait_in_rotation "$i"
    fi
  done
  if [ "$T_LB" != none ] && ! tier_lb_pid >/dev/null; then
    tier_start_lb || return 1
  fi
}

# tier_lb_view: "NAME STATUS" per server, as HAProxy sees them (from its CSV statistics).
tier_lb_view() {
  [ "$T_LB" = haproxy ] || return 0
  tier_check_run curl -fsS --max-time 2 "http://$(tier_front)$LB_STATS_URI;csv" 2>/dev/null |
    awk -F, '$1 == "sutlab" && $2 ~ /^s[0-9]+$/ { print $2, $18 }' || true
}

# tier_status INDENT: the front and every backend with its /readyz.
tier_status() {
  local ind=$1 pid i listen code body view lbstate front label
  front=$(tier_front)
  if [ "$T_LB" != none ]; then
    if pid=$(tier_lb_pid); then
      code=$(tier_http_code tier_check_run "http://$front/health_check")
      say "${ind}front       $T_LB running  pid $pid  http://$front  /health_check $code  log $LOGDIR/$T_LOGPFX-$T_LB.log"
      if [ -n "$T_LB_CPUS" ]; then
        say "${ind}            CPU budget: cores $T_LB_CPUS, $([ "$T_LB" = nginx ] && echo worker_processes || echo nbthread) $(tier_lb_workers)"
      fi
      [ "$T_LB" = haproxy ] && say "${ind}            statistics: http://$front$LB_STATS_URI"
      [ "$T_LB" = nginx ] && say "${ind}            (nginx checks passively: a backend that refuses connections is skipped for 2 s)"
    else
      say "${ind}front       $T_LB stopped  http://$front"
    fi
  fi
  view=$(tier_lb_view)
  for i in $(seq 1 "$T_N"); do
    listen=$(tier_listen "$i")
    label="backend $i  "
    [ "$T_LB" = none ] && label="sutlab     "
    lbstate=
    if [ -n "$view" ]; then
      lbstate=$(printf '%s\n' "$view" | awk -v s="s$i" '$1 == s { print $2 }')
      lbstate="  haproxy: ${lbstate:-?}"
    fi
    if pid=$(tier_instance_pid "$i"); then
      body=$(tier_run curl -s --max-time 2 -w ' %{http_code}' "http://$listen/readyz" 2>/dev/null) || true
      code=${body##* }
      body=${body% *}
      say "${ind}$label running  pid $pid  http://$listen  /readyz ${code:-000} ${body}${lbstate}"
    else
      say "${ind}$label stopped  http://$listen${lbstate}"
    fi
  done
}
