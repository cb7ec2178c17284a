-- Shared by the sutlab wrk scripts (loaded with dofile from the script's own directory).
--
-- Environment read by every script:
--   WRK_HEADERS  extra request headers, separated by "|" or newlines:
--                WRK_HEADERS='Accept-Encoding: gzip|X-Trace: 1'
--   WRK_SEED     seed of math.random (default: the time); thread i uses WRK_SEED + i
--   WRK_QUIET=1  no "SUTLAB_WRK {...}" summary line at the end
-- done() prints, after wrk's own report, one line "SUTLAB_WRK {json}": requests, duration,
-- req/s, bytes, errors (wrk's socket errors and status >= 400), latency mean/max and
-- p50/p75/p90/p95/p99/p99.9 in milliseconds, and a percentile curve; loadscripts/flip and
-- loadscripts/plot read it.

local M = {}

-- The base URL wrk was given (scheme://host:port), for the set-up requests made with curl.
function M.base()
  return string.format("%s://%s:%s", wrk.scheme, wrk.host, wrk.port)
end

-- GET base..path with curl (wrk's Lua has no HTTP client); returns the body or raises.
function M.fetch(path)
  local url = M.base() .. path
  local f = assert(io.popen("curl -fsS --max-time 10 '" .. url:gsub("'", "") .. "' 2>/dev/null"))
  local body = f:read("*a")
  local ok = f:close()
  if body == nil or body == "" then
    error("could not fetch " .. url .. " (is sutlab running? is curl installed?)")
  end
  return body
end

-- Every value of "field": in a JSON text, as strings (slugs) or numbers (ids).
function M.strings(json, field)
  local out = {}
  for v in json:gmatch('"' .. field .. '"%s*:%s*"([^"]*)"') do out[#out + 1] = v end
  return out
end

function M.numbers(json, field)
  local out = {}
  for v in json:gmatch('"' .. field .. '"%s*:%s*(%d+)') do out[#out + 1] = tonumber(v) end
  return out
end

-- Article slugs: from a file (one a line) or the newest pages*100 articles of the API.
function M.slugs(file, pages)
  local slugs = {}
  if file and file ~= "" then
    for line in io.lines(file) do
      if line ~= "" then slugs[#slugs + 1] = line end
    end
  else
    for page = 0, (pages or 5) - 1 do
      local batch = M.strings(M.fetch("/api/articles?limit=100&offset=" .. page * 100), "slug")
      for _, s in ipairs(batch) do slugs[#slugs + 1] = s end
      if #batch < 100 then break end
    end
  end
  if #slugs == 0 then error("no article slugs (empty database? seed it: infra/lab seed tiny)") end
  return slugs
end

-- Store category ids, from /stores/categories.
function M.categories()
  local ids = M.numbers(M.fetch("/stores/categories"), "id")
  if #ids == 0 then error("no store categories (empty database?)") end
  return ids
end

-- Store ids of every category listing.
function M.store_ids()
  local ids = {}
  for _, c in ipairs(M.categories()) do
    for _, id in ipairs(M.numbers(M.fetch("/stores?categoryId=" .. c), "id")) do
      -- a listing's objects hold "id" then "ownerId"/"categoryId": only "id" matches
      ids[#ids + 1] = id
    end
  end
  if #ids == 0 then error("no stores (empty database?)") end
  return ids
end

-- The ids 1..N when the script's argument gives N (no set-up request), else fetch().
function M.ids_or(arg, fetch)
  local n = tonumber(arg or "")
  if not n then return fetch() end
  local ids = {}
  for i = 1, n do ids[i] = i end
  return ids
end

-- Extra headers from WRK_HEADERS into wrk.headers.
function M.apply_headers()
  local spec = os.getenv("WRK_HEADERS")
  if not spec or spec == "" then return end
  for item in spec:gmatch("[^|\n]+") do
    local name, value = item:match("^%s*([^:]+):%s*(.-)%s*$")
    if name then wrk.headers[name] = value end
  end
end

-- Thread numbering (setup runs in the main state) and per-thread seeding (init).
local counter = 0
function M.setup(thread)
  counter = counter + 1
  thread:set("thread_no", counter)
end

function M.seed()
  local base = tonumber(os.getenv("WRK_SEED") or "") or os.time()
  math.randomseed(base + (thread_no or 0) * 7919)
end

local function ms(us) return us / 1000.0 end

function M.done(summary, latency, requests)
  if os.getenv("WRK_QUIET") == "1" then return end
  local e = summary.errors
  local secs = summary.duration / 1e6
  local pct = {}
  for _, p in ipairs({1, 5, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100}) do
    pct[#pct + 1] = string.format("[%g,%.3f]", p, ms(latency:percentile(p)))
  end
  io.write(string.format(
    'SUTLAB_WRK {"requests":%d,"duration_s":%.3f,"rps":%.2f,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_ms":{"mean":%.3f,"max":%.3f,"p50":%.3f,"p75":%.3f,"p90":%.3f,"p95":%.3f,"p99":%.3f,"p99.9":%.3f},' ..
    '"percentiles":[%s]}\n',
    summary.requests, secs, secs > 0 and summary.requests / secs or 0, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    ms(latency.mean), ms(latency.max), ms(latency:percentile(50)), ms(latency:percentile(75)),
    ms(latency:percentile(90)), ms(latency:percentile(95)), ms(latency:percentile(99)),
    ms(latency:percentile(99.9)), table.concat(pct, ",")))
end

return M
