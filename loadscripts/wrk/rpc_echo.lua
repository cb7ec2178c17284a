-- POST /rpc/echo with a JSON body carrying a payload of N bytes (first argument, default 100):
-- the RPC interface of the TPS-trend write-up (with --log verbose each body is logged).
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/rpc_echo.lua http://127.0.0.1:8080/rpc/echo -- 1000
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local path, body
setup = lib.setup
done = lib.done

function init(args)
  lib.seed()
  local size = tonumber(args[1] or "") or 100
  path = wrk.path ~= "/" and wrk.path or "/rpc/echo"
  body = string.format('{"id":%d,"method":"echo","payload":"%s"}', math.random(1, 1000000), string.rep("x", size))
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  return wrk.format("POST", path, nil, body)
end
