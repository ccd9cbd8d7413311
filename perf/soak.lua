-- wrk script for perf/soak.py: spread GETs over the paths given after `--`,
-- count answers by status, print them as one JSON line at the end.
local paths = {}
counts = {}

function init(args)
  for i, path in ipairs(args) do paths[i] = path end
  math.randomseed(42)
end

function request()
  return wrk.format("GET", paths[math.random(#paths)])
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts")) do
      total[status] = (total[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do table.insert(parts, string.format('"%d": %d', status, n)) end
  io.write("SOAK_STATUS {" .. table.concat(parts, ", ") .. "}\n")
end
