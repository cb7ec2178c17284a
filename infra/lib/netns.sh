# shellcheck shell=bash
# The netns lab (`infra/lab up --netns [--rate R]`): load generator, web tier and database tier in
# three network namespaces joined by two veth pairs, on one box:
#
#   client ns                 web ns                                 db ns
#   10.77.1.1 [to-web] <--> [to-client] 10.77.1.2  10.77.2.1 [to-db] <--> [to-web] 10.77.2.2
#   load generators           sutlab (or LB + sutlab x N)            PostgreSQL :5432, Redis :6379
#
# The client reaches only the web tier (10.77.1.0/24); the web tier reaches the database tier
# (10.77.2.0/24). These addresses exist only inside the namespaces: everything that talks to them
# runs through `ip netns exec` (the same address from the root namespace is routed off the machine).
# --rate caps the client<->web link in both directions with tc tbf (this kernel has no netem).
#
# Sourced by infra/lab after common.sh and tier.sh; uses its VAR, LOGDIR, LAB_PORT, BACKEND_PORT.
# The names and addresses are chosen at `up` (SUTLAB_LAB_NETNS, SUTLAB_LAB_NETNS_NET) and recorded in
# var/netns/netns.conf, which every later command reads.

NS_DIR=$VAR/netns
NS_PG_PORT=5432
NS_REDIS_PORT=6379
NS_PFX='' NS_NET='' NS_CLIENT='' NS_WEB='' NS_DB='' NS_CLIENT_IP='' NS_WEB_IP='' NS_WEB_DB_IP='' NS_DB_IP='' NS_RATE=''
NS_DB_URL='' NS_REDIS_URL=''

# netns_names PREFIX NET: sets the NS_* names and addresses.
netns_names() {
  NS_PFX=$1 NS_NET=$2
  NS_CLIENT=$NS_PFX-client NS_WEB=$NS_PFX-web NS_DB=$NS_PFX-db
  NS_CLIENT_IP=$NS_NET.1.1 NS_WEB_IP=$NS_NET.1.2 NS_WEB_DB_IP=$NS_NET.2.1 NS_DB_IP=$NS_NET.2.2
  NS_DB_URL="postgresql://postgres@$NS_DB_IP:$NS_PG_PORT/sutlab"
  NS_REDIS_URL="redis://$NS_DB_IP:$NS_REDIS_PORT"
}

# netns_names_from_env: names for a new lab, from SUTLAB_LAB_NETNS / SUTLAB_LAB_NETNS_NET.
netns_names_from_env() {
  local pfx=${SUTLAB_LAB_NETNS:-sutlab} net=${SUTLAB_LAB_NETNS_NET:-10.77} a b
  case $pfx in
    ''|*[!a-z0-9-]*|-*) die "SUTLAB_LAB_NETNS must be lowercase letters, digits and '-', got '$pfx'" ;;
  esac
  [ "${#pfx}" -le 24 ] || die "SUTLAB_LAB_NETNS is too long (24 characters at most)"
  case $net in
    *.*.*|*[!0-9.]*|.*|*.) die "SUTLAB_LAB_NETNS_NET must be two octets like 10.77, got '$net'" ;;
    *.*) a=${net%.*} b=${net#*.} ;;
    *) die "SUTLAB_LAB_NETNS_NET must be two octets like 10.77, got '$net'" ;;
  esac
  { [ "$a" -le 255 ] && [ "$b" -le 255 ]; } || die "SUTLAB_LAB_NETNS_NET: octets are 0..255"
  netns_names "$pfx" "$net"
}

# netns_load: the names of the lab recorded under var/netns (1 if none was set up).
netns_load() {
  local k v pfx='' net=''
  [ -f "$NS_DIR/netns.conf" ] || return 1
  while IFS='=' read -r k v; do
    case $k in PREFIX) pfx=$v ;; NET) net=$v ;; RATE) NS_RATE=$v ;; esac
  done < "$NS_DIR/netns.conf"
  [ -n "$pfx" ] && [ -n "$net" ] || return 1
  netns_names "$pfx" "$net"
}

netns_conf_write() {
  mkdir -p "$NS_DIR"
  printf 'PREFIX=%s\nNET=%s\nRATE=%s\n' "$NS_PFX" "$NS_NET" "$NS_RATE" > "$NS_DIR/netns.conf"
}

# (No `| grep -q` here: with pipefail, grep quitting early can fail the pipeline.)
ns_exists() {
  local names
  names=$(ip netns list 2>/dev/null | awk '{ print $1 }') || return 1
  [[ $'\n'$names$'\n' == *$'\n'"$1"$'\n'* ]]
}

# addr_on NS DEV CIDR: DEV in NS carries the address CIDR.
addr_on() {
  local out
  out=$(ip -n "$1" -o addr show dev "$2" 2>/dev/null) || return 1
  [[ $out == *" $3 "* ]]
}

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# netns_links_ok: both links are there with their addresses.
netns_links_ok() {
  addr_on "$NS_CLIENT" to-web "$NS_CLIENT_IP/24" && addr_on "$NS_WEB" to-client "$NS_WEB_IP/24" &&
    addr_on "$NS_WEB" to-db "$NS_WEB_DB_IP/24" && addr_on "$NS_DB" to-web "$NS_DB_IP/24"
}

netns_all_exist() { ns_exists "$NS_CLIENT" && ns_exists "$NS_WEB" && ns_exists "$NS_DB"; }

# netns_is_up: this lab's namespaces exist (var/netns/netns.conf names them).
netns_is_up() { netns_load && netns_all_exist; }

# netns_create: the three namespaces and both links (kept when they are already there and whole).
# Returns 0 if it created them, 1 if it kept existing ones.
netns_create() {
  local ns
  for ns in "$NS_CLIENT" "$NS_WEB" "$NS_DB"; do
    if ns_exists "$ns" && [ ! -f "$NS_DIR/netns.conf" ]; then
      die "network namespace $ns exists but this lab ($NS_DIR) did not create it: remove it (ip netns del $ns) or choose other names with SUTLAB_LAB_NETNS"
    fi
  done
  if netns_all_exist && netns_links_ok; then
    return 1
  fi
  # Recorded first: a failure half-way is cleaned up by `infra/lab down`.
  netns_conf_write
  step "creating network namespaces $NS_CLIENT, $NS_WEB, $NS_DB"
  for ns in "$NS_CLIENT" "$NS_WEB" "$NS_DB"; do
    ns_exists "$ns" || ip netns add "$ns"
    ip -n "$ns" link set lo up
  done
  ip -n "$NS_CLIENT" link del to-web 2>/dev/null || true
  ip -n "$NS_WEB" link del to-db 2>/dev/null || true
  # Both ends are created inside their namespaces: nothing appears in the root one.
  ip link add to-web netns "$NS_CLIENT" type veth peer name to-client netns "$NS_WEB"
  ip link add to-db netns "$NS_WEB" type veth peer name to-web netns "$NS_DB"
  ip -n "$NS_CLIENT" addr add "$NS_CLIENT_IP/24" dev to-web
  ip -n "$NS_WEB" addr add "$NS_WEB_IP/24" dev to-client
  ip -n "$NS_WEB" addr add "$NS_WEB_DB_IP/24" dev to-db
  ip -n "$NS_DB" addr add "$NS_DB_IP/24" dev to-web
  ip -n "$NS_CLIENT" link set to-web up
  ip -n "$NS_WEB" link set to-client up
  ip -n "$NS_WEB" link set to-db up
  ip -n "$NS_DB" link set to-web up
  return 0
}

# netns_delete: kill whatever still runs in the namespaces (the lab's own processes were stopped
# before; these are leftovers of exec-client), delete them, forget them.
netns_delete() {
  local ns pids p n
  for ns in "$NS_CLIENT" "$NS_WEB" "$NS_DB"; do
    ns_exists "$ns" || continue
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then
      say "(stopping what still runs in $ns: ${pids//$'\n'/ })"
      for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
      n=50
      while [ "$n" -gt 0 ] && [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ]; do
        sleep 0.1
        n=$((n - 1))
      done
      for p in $(ip netns pids "$ns" 2>/dev/null || true); do kill -KILL "$p" 2>/dev/null || true; done
    fi
    ip netns del "$ns"
  done
  rm -f "$NS_DIR/netns.conf"
}

# netns_rate_bytes RATE: bytes per second of a tc rate like 10mbit (bit, kbit, mbit, gbit).
netns_rate_bytes() {
  local n unit mult
  case $1 in
    *[!0-9a-z]*|'') return 1 ;;
  esac
  n=${1%%[a-z]*}
  unit=${1#"$n"}
  [ -n "$n" ] || return 1
  case $unit in
    bit) mult=1 ;; kbit) mult=1000 ;; mbit) mult=1000000 ;; gbit) mult=1000000000 ;;
    *) return 1 ;;
  esac
  [ "$n" -gt 0 ] 2>/dev/null || return 1
  printf '%s\n' "$((n * mult / 8))"
}

# netns_set_rate RATE|'': cap both directions of the client<->web link with tc tbf, or uncap it.
netns_set_rate() {
  local rate=$1 bytes burst pair ns dev
  for pair in "$NS_WEB:to-client" "$NS_CLIENT:to-web"; do
    ns=${pair%%:*} dev=${pair#*:}
    if [ -n "$rate" ]; then
      bytes=$(netns_rate_bytes "$rate") || die "bad rate '$rate' (e.g. 10mbit, 500kbit, 1gbit)"
      # burst: 10 ms at the rate, at least 16 KiB (over one MTU; GSO packets are segmented by tbf)
      burst=$((bytes / 100))
      [ "$burst" -ge 16384 ] || burst=16384
      tc -n "$ns" qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
    else
      tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
    fi
  done
  NS_RATE=$rate
  netns_conf_write
  if [ -n "$rate" ]; then
    step "client<->web link capped at $rate each way (tc tbf)"
  fi
}

# ---- database tier (in the db namespace) ---------------------------------------------------------------

# netns_pg_home: var/netns/pg, or a /tmp dir linked from it when PostgreSQL's user cannot reach var/.
netns_pg_home() {
  local link=$NS_DIR/pg home h
  mkdir -p "$NS_DIR"
  if [ -L "$link" ]; then
    home=$(readlink "$link")
  elif [ -d "$link" ] || pg_dir_ok "$VAR"; then
    home=$link
  else
    h=$(printf '%s' "$VAR" | sha256sum | cut -c1-10)
    home=$(tmp_home)/netns-pg-$h
    ln -sfn "$home" "$link"
  fi
  pg_mkdir 755 "$home" "$home/run"
  printf '%s\n' "$home"
}

netns_psql() {
  in_ns "$NS_DB" "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$NS_PG_PORT" -U postgres -v ON_ERROR_STOP=1 "$@"
}

netns_start_pg() {
  local home data pid
  home=$(netns_pg_home)
  data=$home/data
  if pid=$(pg_running_pid "$data"); then
    say "PostgreSQL already running in $NS_DB (pid $pid)"
  else
    pg_clear_stale "$data" "$home/run"
    if [ ! -f "$data/PG_VERSION" ]; then
      step "initialising PostgreSQL in $data"
      rm -rf "$data"
      pg_init "$data" "$home/initdb.log"
    fi
    # Trust for the lab subnet: these addresses exist only inside the lab's namespaces.
    if ! grep -Fq "$NS_NET.0.0/16" "$data/pg_hba.conf"; then
      printf 'host all all %s.0.0/16 trust   # sutlab netns lab\n' "$NS_NET" >> "$data/pg_hba.conf"
    fi
    pg_write_conf "$data" "$NS_PG_PORT" "$home/run" "listen_addresses = '$NS_DB_IP,127.0.0.1'"
    step "starting PostgreSQL on $NS_DB_IP:$NS_PG_PORT in namespace $NS_DB"
    mkdir -p "$LOGDIR"
    ln -sfn "$home/postgresql.log" "$LOGDIR/netns-postgresql.log"
    if ! (cd / && in_ns "$NS_DB" runuser -u "$(pg_os_user)" -- "$PG_BIN/pg_ctl" -D "$data" \
            -l "$home/postgresql.log" -w -t 60 start >/dev/null); then
      tail -n 20 "$home/postgresql.log" >&2 || true
      die "PostgreSQL did not start in $NS_DB (log: $home/postgresql.log)"
    fi
  fi
  if [ -z "$(netns_psql -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = 'sutlab'")" ]; then
    step "creating database sutlab"
    netns_psql -d postgres -c 'CREATE DATABASE sutlab' >/dev/null
  fi
}

netns_pg_pid() {
  [ -e "$NS_DIR/pg" ] || return 1
  pg_running_pid "$(readlink -f "$NS_DIR/pg")/data"
}

netns_stop_pg() {
  local home pid
  [ -e "$NS_DIR/pg" ] || return 0
  home=$(readlink -f "$NS_DIR/pg")
  if pid=$(pg_running_pid "$home/data"); then
    step "stopping PostgreSQL in $NS_DB (pid $pid)"
  fi
  pg_stop "$home/data" fast
}

netns_redis_ping() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  in_ns "$NS_DB" bash -c "$(declare -f redis_ping)"'; redis_ping "$1"' _ "$NS_REDIS_PORT"
}

netns_redis_pid() { redis_running_pid "$NS_DIR/redis/redis.pid" "$NS_DIR/redis"; }

netns_start_redis() {
  local dir=$NS_DIR/redis pid n=50
  mkdir -p "$dir" "$LOGDIR"
  if pid=$(netns_redis_pid) && netns_redis_ping; then
    say "Redis already running in $NS_DB (pid $pid)"
    return 0
  fi
  redis_stop "$dir/redis.pid" "$dir"
  step "starting Redis on $NS_DB_IP:$NS_REDIS_PORT in namespace $NS_DB"
  in_ns "$NS_DB" redis-server --port "$NS_REDIS_PORT" --bind "$NS_DB_IP" 127.0.0.1 --protected-mode no \
    --save '' --appendonly no --daemonize yes --pidfile "$dir/redis.pid" \
    --logfile "$LOGDIR/netns-redis.log" --dir "$dir" >/dev/null
  while [ "$n" -gt 0 ]; do
    netns_redis_pid >/dev/null && netns_redis_ping && return 0
    sleep 0.05
    n=$((n - 1))
  done
  tail -n 20 "$LOGDIR/netns-redis.log" >&2 || true
  die "Redis did not start in $NS_DB (log: $LOGDIR/netns-redis.log)"
}

netns_stop_redis() {
  local pid
  if pid=$(netns_redis_pid); then
    step "stopping Redis in $NS_DB (pid $pid)"
  fi
  redis_stop "$NS_DIR/redis/redis.pid" "$NS_DIR/redis"
}

# ---- web tier ---------------------------------------------------------------------------------------

# shellcheck disable=SC2034  # the T_* variables are read by tier.sh
# netns_tier N LB: the T_* variables of the web tier (front on the web address, checked from the
# client namespace; backends on the web namespace's loopback).
netns_tier() {
  T_DIR=$NS_DIR/web T_LOGPFX=netns T_NS=$NS_WEB T_CHECK_NS=$NS_CLIENT T_BIN=$BIN
  T_N=$1 T_LB=$2 T_FRONT_HOST=$NS_WEB_IP T_FRONT_PORT=$LAB_PORT T_BACK_PORT=$BACKEND_PORT
  T_DB_URL=$NS_DB_URL T_REDIS_URL=$NS_REDIS_URL T_PROMEX='' T_LB_CPUS=${LB_CPUS:-}
  # HAProxy's exporter, on the web namespace's loopback (infra/lab up --netns --monitoring)
  if [ "${MON_ON:-0}" = 1 ] && [ "$2" = haproxy ]; then T_PROMEX=127.0.0.1:$MON_HAPROXY_PORT; fi
}

# ---- the whole lab -----------------------------------------------------------------------------------

# netns_down: web tier, database tier, namespaces.
netns_down() {
  netns_load || return 0
  if tier_load "$NS_DIR/web"; then
    tier_down
  fi
  netns_stop_redis
  netns_stop_pg
  step "deleting network namespaces $NS_CLIENT, $NS_WEB, $NS_DB"
  netns_delete
}

netns_status() {
  local pid rate
  if ! netns_load; then
    return 0
  fi
  if ! netns_all_exist; then
    say "netns lab  incomplete (some of $NS_CLIENT $NS_WEB $NS_DB are missing): infra/lab down cleans up"
    return 0
  fi
  rate=${NS_RATE:-uncapped}
  say "netns lab   up  client $NS_CLIENT ($NS_CLIENT_IP)  web $NS_WEB ($NS_WEB_IP, $NS_WEB_DB_IP)  db $NS_DB ($NS_DB_IP)"
  say "            client<->web link: $rate  (tc: $(tc -n "$NS_WEB" qdisc show dev to-client 2>/dev/null | head -n 1))"
  say "            load from the client namespace: infra/lab exec-client -- wrk http://$NS_WEB_IP:$LAB_PORT/health_check"
  if tier_load "$NS_DIR/web"; then
    tier_status "  "
  else
    say "  web tier  stopped"
  fi
  if pid=$(netns_pg_pid); then
    say "  postgresql  running  pid $pid  $NS_DB_URL  (namespace $NS_DB)"
  else
    say "  postgresql  stopped"
  fi
  if pid=$(netns_redis_pid); then
    say "  redis       running  pid $pid  $NS_REDIS_URL  (namespace $NS_DB)"
  else
    say "  redis       stopped"
  fi
}
