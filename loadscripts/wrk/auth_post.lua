-- Authenticated writes with a fixture user's token (log in first, outside the measurement):
--   TOKEN=$(loadscripts/wrk/login http://127.0.0.1:8080 user1@example.com)
--   TOKEN=$TOKEN wrk -t1 -c16 -d10s -s loadscripts/wrk/auth_post.lua http://127.0.0.1:8080 -- comment
-- First argument: comment  POST /api/articles/<random slug>/comments   (the default)
--                 article  POST /api/articles (a new article each time)
--                 favorite POST then DELETE /api/articles/<random slug>/favorite (like, unlike)
-- The token comes from TOKEN or the second argument. Slugs as in article_by_slug.lua (SLUGS_FILE,
-- else the newest 500 articles).
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local lib = dofile(dir .. "common.lua")
lib.apply_headers()
local kind, slugs, n, liked = "comment", nil, 0, {}
setup = lib.setup
done = lib.done

function init(args)
  lib.seed()
  kind = args[1] or "comment"
  local token = args[2] or os.getenv("TOKEN")
  if not token or token == "" then
    error("no token: TOKEN=$(loadscripts/wrk/login URL) wrk ... (or pass it as the second argument)")
  end
  if kind ~= "comment" and kind ~= "article" and kind ~= "favorite" then
    error("unknown kind " .. kind .. " (comment, article, favorite)")
  end
  wrk.headers["Authorization"] = "Token " .. token
  wrk.headers["Content-Type"] = "application/json"
  if kind ~= "article" then slugs = lib.slugs(os.getenv("SLUGS_FILE"), 5) end
end

function request()
  n = n + 1
  if kind == "article" then
    local word = string.format("%08x", math.random(0, 0x7fffffff))
    return wrk.format("POST", "/api/articles", nil, string.format(
      '{"article":{"title":"wrk %s %d","description":"written by wrk","body":"A body written by wrk.","tagList":["wrk"]}}',
      word, n))
  end
  local slug = slugs[math.random(#slugs)]
  if kind == "comment" then
    return wrk.format("POST", "/api/articles/" .. slug .. "/comments", nil,
      string.format('{"comment":{"body":"wrk was here (%d)"}}', n))
  end
  -- favorite: like a slug, and unlike it on the next request of this thread
  if #liked > 0 then
    local s = table.remove(liked)
    return wrk.format("DELETE", "/api/articles/" .. s .. "/favorite")
  end
  liked[#liked + 1] = slug
  return wrk.format("POST", "/api/articles/" .. slug .. "/favorite")
end
