-- wrk script used by loadscripts/bench (suite board): every request is GET PREFIX..LINE with LINE
-- uniform over the non-empty lines of FILE, read once per thread at start.
--
--   wrk -t1 -c64 -d5s --latency -s random_line.lua http://127.0.0.1:PORT -- PREFIX FILE [SEED]
--   e.g.  -- /api/articles/ /tmp/slugs.txt 1     (a random article; FILE = the dump of
--                                                  SELECT slug FROM articles ORDER BY id)
--
-- The lines go into the path as they are: they must be URL-safe (slugs are [a-z0-9-]).
-- SEED (default 1) makes a run reproducible; thread k (0-based) of a -tN run uses SEED + k.

local counter = 0

function setup(thread)
  thread:set("thread_index", counter)
  counter = counter + 1
end

local prefix, lines, n

function init(args)
  prefix = args[1] or "/"
  if args[2] == nil then
    error("random_line.lua: usage: -- PREFIX FILE [SEED]")
  end
  local f, err = io.open(args[2], "r")
  if f == nil then
    error("random_line.lua: cannot open " .. args[2] .. ": " .. tostring(err))
  end
  lines, n = {}, 0
  for l in f:lines() do
    if l ~= "" then
      n = n + 1
      lines[n] = l
    end
  end
  f:close()
  if n == 0 then
    error("random_line.lua: " .. args[2] .. " has no lines")
  end
  local seed = tonumber(args[3] or "1") or 1
  math.randomseed(seed + (thread_index or 0))
end

function request()
  return wrk.format(nil, prefix .. lines[math.random(1, n)])
end
