-- server_scan.lua -- wrk script: 100-row HTTP scans of table "bench" from a random
-- existing row of the shared dataset (see server_get.lua for the keys).
--   wrk -t2 -c50 -d20s --latency -s bench/server_scan.lua http://127.0.0.1:8080 -- N
local rows = 10000000

local function be32(v)
  return string.format("%%%02X%%%02X%%%02X%%%02X",
    math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256,
    math.floor(v / 256) % 256, v % 256)
end

local function key_path(i)
  local uid = 1000000 + 2 * math.floor(i / 10)
  local ts = 1700000000 - 60 * (i % 10)
  return be32(0) .. be32(uid) .. "%FF%FF%FF%FF" .. be32(4294967295 - ts)
end

function init(args)
  if args[1] then rows = tonumber(args[1]) end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function request()
  return wrk.format("GET", "/bench/*?limit=100&startrow=" .. key_path(math.random(0, rows - 101)))
end

-- No response() callback: wrk then neither copies headers and body into Lua
-- nor runs a script per response (costly on a machine whose cores the
-- server shares), and it still counts non-2xx answers itself.
