-- wrk script used by loadscripts/bench --pipeline: every write carries DEPTH requests for PATH
-- (HTTP/1.1 pipelining; the server answers them in order on the same connection).
--
--   wrk -t1 -c64 -d5s --latency -s pipeline.lua http://127.0.0.1:PORT -- DEPTH PATH
--
-- Why: on a two-core machine one wrk thread saturates its core at ~50,000 trivial responses a
-- second, before the server does; a write and a read per DEPTH requests make wrk cheap enough per
-- request for the server's core to be the limit. wrk counts every response of a batch.

local batch

function init(args)
  local depth = tonumber(args[1]) or 1
  local path = args[2] or "/"
  local one = wrk.format("GET", path)
  local parts = {}
  for i = 1, depth do
    parts[i] = one
  end
  batch = table.concat(parts)
end

function request()
  return batch
end
