-- GET /stores?categoryId=<random category>: the listing --redis-cache caches.
-- Categories: 1..N when the first argument gives N, else those of /stores/categories (curl at
-- start). A second argument adds &address=<it> (the other cache field).
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/stores_by_category.lua http://127.0.0.1:8080
--   WRK_HEADERS='Accept-Encoding: gzip' wrk ... -s loadscripts/wrk/stores_by_category.lua URL
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local cats, suffix = nil, ""
setup = lib.setup
done = lib.done

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
  lib.seed()
  cats = lib.ids_or(args[1], lib.categories)
  if args[2] and args[2] ~= "" then suffix = "&address=" .. urlencode(args[2]) end
end

function request()
  return wrk.format("GET", "/stores?categoryId=" .. cats[math.random(#cats)] .. suffix)
end
