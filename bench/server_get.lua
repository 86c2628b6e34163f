-- server_get.lua -- wrk script: HTTP Gets of random existing rows of the shared
-- dataset (bench/dataset.h) in table "bench":
-- row i is the 16-byte key big-endian uid = 1000000 + 2*(i/10), then big-endian
-- UINT64_MAX - ts with ts = 1700000000 - 60*(i%10), percent-encoded in the path.
--   wrk -t2 -c50 -d20s --latency -s bench/server_get.lua http://127.0.0.1:8080 -- N
local rows = 10000000

local function be32(v)
  return string.format("%%%02X%%%02X%%%02X%%%02X",
    math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256,
    math.floor(v / 256) % 256, v % 256)
end

function key_path(i)
  local uid = 1000000 + 2 * math.floor(i / 10)
  local ts = 1700000000 - 60 * (i % 10)
  return be32(0) .. be32(uid) .. "%FF%FF%FF%FF" .. be32(4294967295 - ts)
end

function init(args)
  if args[1] then rows = tonumber(args[1]) end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function request()
  return wrk.format("GET", "/bench/" .. key_path(math.random(0, rows - 1)))
end

-- No response() callback: wrk then neither copies headers and body into Lua
-- nor runs a script per response (costly on a machine whose cores the
-- server shares), and it still counts non-2xx answers itself.
