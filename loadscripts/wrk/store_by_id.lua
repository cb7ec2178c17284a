-- GET /stores/<random id>: a store with its menus (one query).
-- Ids: 1..MAX when the first argument gives MAX, else every id of every category listing
-- (fetched at start with curl).
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/store_by_id.lua http://127.0.0.1:8080
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/store_by_id.lua http://127.0.0.1:8080 -- 2000
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local ids
setup = lib.setup
done = lib.done

function init(args)
  lib.seed()
  ids = lib.ids_or(args[1], lib.store_ids)
end

function request()
  return wrk.format("GET", "/stores/" .. ids[math.random(#ids)])
end
