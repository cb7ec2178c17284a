-- wrk, slowed on the client side on purpose (tests/integration/tooling/test_steps.py): every response
-- costs the load tool about 1-2 ms of CPU, so wrk saturates its one thread long before sutlab.
response = function(status, headers, body)
  local x = 0
  for i = 1, 400000 do x = x + i % 7 end
end
