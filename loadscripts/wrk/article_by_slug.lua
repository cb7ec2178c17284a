-- GET /api/articles/<random slug>: the show_articles endpoint.
-- Slugs: from a file (one a line: first argument or SLUGS_FILE), else fetched at start with curl
-- from the newest PAGES*100 articles (second argument, default 5).
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/article_by_slug.lua http://127.0.0.1:8080
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/article_by_slug.lua http://127.0.0.1:8080 -- slugs.txt
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/article_by_slug.lua http://127.0.0.1:8080 -- - 20
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local slugs
setup = lib.setup
done = lib.done

function init(args)
  lib.seed()
  local file = args[1]
  if file == "-" or file == "" then file = nil end
  slugs = lib.slugs(file or os.getenv("SLUGS_FILE"), tonumber(args[2] or "") or 5)
end

function request()
  return wrk.format("GET", "/api/articles/" .. slugs[math.random(#slugs)])
end
