-- GET /api/articles?limit=LIMIT&offset=K: the paginated article index (--count-pagination,
-- the created_at index). Arguments: LIMIT (20), PAGES (1: always the first page; N: a random
-- page among the first N), EXTRA query (e.g. "author=user3", "tag=go").
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/articles_index.lua http://127.0.0.1:8080
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/articles_index.lua http://127.0.0.1:8080 -- 20 50
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/articles_index.lua http://127.0.0.1:8080 -- 20 1 author=user3
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local limit, pages, extra = 20, 1, ""
setup = lib.setup
done = lib.done

function init(args)
  lib.seed()
  limit = tonumber(args[1] or "") or 20
  pages = tonumber(args[2] or "") or 1
  if args[3] and args[3] ~= "" then extra = "&" .. args[3] end
end

function request()
  local page = pages > 1 and math.random(0, pages - 1) or 0
  return wrk.format("GET", string.format("/api/articles?limit=%d&offset=%d%s", limit, page * limit, extra))
end
