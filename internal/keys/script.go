package keys

// ClockPrelude begins every Lua script that reads the clock (the
// escalations' and the heartbeats'). Times are unix microseconds of Redis's
// own clock (TIME), so that processes with skewed clocks agree. Lua numbers
// are doubles: microsecond times (about 1.8e15) are exact, but tostring
// would round them to 14 digits, so every value is written back through
// us(x), string.format('%d'). The script's last argument is "" for TIME, or
// a time in µs that replaces it (tests drive a fake clock through it).
//
// It defines now_us() (the time, µs) and us(x) (x as a whole-number
// string).
const ClockPrelude = `
local clock = ARGV[#ARGV]
local function now_us()
  if clock ~= nil and clock ~= '' then return tonumber(clock) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function us(x) return string.format('%d', x) end
`
