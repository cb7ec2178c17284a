-- One fixed request: the path of wrk's URL, method WRK_METHOD (GET), body WRK_BODY (none),
-- headers WRK_HEADERS ("Name: value|Name: value"); prints the SUTLAB_WRK summary line.
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/plain.lua http://127.0.0.1:8080/health_check
--   WRK_HEADERS='Accept-Encoding: gzip' wrk -t1 -c32 -d10s -s loadscripts/wrk/plain.lua \
--       'http://127.0.0.1:8080/api/articles?limit=100'
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/plain.lua 'http://127.0.0.1:8080/work/cpu?ms=10'
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body and body ~= "" then
  wrk.body = body
  if not wrk.headers["Content-Type"] then wrk.headers["Content-Type"] = "application/json" end
end
setup = lib.setup
done = lib.done
