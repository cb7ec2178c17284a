-- rpc_echo.lua's load (POST /rpc/echo, an N-byte payload) from a client that writes every
-- response out as it arrives: one line "STATUS BODY", a plain write and a flush per response, in
-- wrk's event loop, as the TPS-trend write-up's load script printed every response. It slows the
-- load generator on purpose (and wrk reads every response's headers and body, since there is a
-- response() to give them to).
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/print_responses.lua http://127.0.0.1:8080/rpc/echo -- var/responses.txt
--   wrk -t1 -c32 -d10s -s loadscripts/wrk/print_responses.lua http://127.0.0.1:8080 -- - 4096
-- Arguments: FILE (absent or "-": stdout, ahead of wrk's report), then N (payload bytes, 100).
-- FILE is truncated by the first thread and appended to by every thread (O_APPEND), so with -t2
-- or more the threads add whole lines instead of overwriting each other's. CR and LF in a body are
-- written as \r and \n: one line per response, as many lines as wrk's "N requests" counts
-- (both happen in wrk's response_complete). A FILE that cannot be opened: one line, exit 2.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "rpc_echo.lua")  -- its request(), setup, done, and init(args) (args[1]: N)
local echo_init = init
local out

local function open_output(target)
  if target == nil or target == "" or target == "-" then return io.stdout end
  if thread_no == 1 then  -- set by common.setup before init; thread 1 starts first
    local f, err = io.open(target, "w")
    if not f then return nil, err end
    f:close()
  end
  return io.open(target, "a")
end

function init(args)
  local err
  out, err = open_output(args[1])
  if not out then
    io.stderr:write("print_responses.lua: " .. tostring(err) .. "\n")  -- err names the file
    os.exit(2)
  end
  echo_init({args[2]})
end

function response(status, headers, body)
  -- one write per line, so that threads writing to stdout never split each other's lines
  out:write(status .. " " .. body:gsub("\r", "\\r"):gsub("\n", "\\n") .. "\n")
  out:flush()
end
