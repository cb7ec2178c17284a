-- wrk script used by loadscripts/bench: every request is GET PREFIX..N with N uniform in MIN..MAX.
--
--   wrk -t1 -c64 -d5s --latency -s random_path.lua http://127.0.0.1:PORT -- PREFIX MAX [SEED [MIN]]
--   e.g.  -- '/stores?categoryId=' 20 1      (the delivery listing, one of 20 categories)
--         -- '/stores/' 2000 1               (a store detail with its menus)
--         -- '/api/articles?limit=20&offset=' 980 1 0   (the board index, offset 0..980)
--
-- MIN defaults to 1. SEED (default 1) makes a run reproducible; thread k (0-based) of a -tN run
-- uses SEED + k, so threads do not repeat each other's sequence.

local counter = 0

function setup(thread)
  thread:set("thread_index", counter)
  counter = counter + 1
end

local prefix, min, max

function init(args)
  prefix = args[1] or "/stores?categoryId="
  max = tonumber(args[2] or "20")
  if max == nil then
    error("random_path.lua: MAX must be a whole number, got " .. tostring(args[2]))
  end
  min = tonumber(args[4] or "1")
  if min == nil or min > max then
    error("random_path.lua: MIN must be a whole number <= MAX, got " .. tostring(args[4]))
  end
  local seed = tonumber(args[3] or "1") or 1
  math.randomseed(seed + (thread_index or 0))
end

function request()
  return wrk.format(nil, prefix .. math.random(min, max))
end
