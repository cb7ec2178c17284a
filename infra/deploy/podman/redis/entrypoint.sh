#!/bin/sh
# The official redis image's rule: "redis-server" with no configuration file listens for everyone.
set -e
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  case ${2:-} in
    *.conf) ;;
    *) shift; set -- redis-server --protected-mode no "$@" ;;
  esac
fi
exec "$@"
