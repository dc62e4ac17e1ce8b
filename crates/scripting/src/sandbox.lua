-- Petrel's Lua sandbox (Redis 7.0 behaviour). Runs once per VM with the
-- unrestricted base functions; see sandbox.rs for the invariants.
local P, libs, allow = ...
local rawget, rawset, next, type, error, select, setmetatable, getmetatable, tostring, pcall, xpcall, ipairs =
      rawget, rawset, next, type, error, select, setmetatable, getmetatable, tostring, pcall, xpcall, ipairs
local resume = coroutine.resume
local conv, handler = libs.__conv, libs.__handler

local MODIFY = 'Attempt to modify a readonly table'
local ro = setmetatable({}, {__mode = 'k'})   -- proxy -> protected table
local mt_view = {}                            -- proxy -> what getmetatable shows

local function ro_newindex() error(MODIFY, 2) end

local function protect(t)
  local p = {}
  ro[p] = t
  setmetatable(p, {__index = t, __newindex = ro_newindex})
  return p
end

local function nonexistent(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end

local function need_table(fname, narg, n, v)
  if type(v) ~= 'table' then
    error("bad argument #" .. narg .. " to '" .. fname .. "' (table expected, got " ..
          (n < narg and 'no value' or type(v)) .. ")", 3)
  end
end

local function need_value(fname, narg, n)
  if n < narg then error("bad argument #" .. narg .. " to '" .. fname .. "' (value expected)", 3) end
end

local function w_rawget(...)
  local n, t, k = select('#', ...), ...
  need_table('rawget', 1, n, t)
  need_value('rawget', 2, n)
  return rawget(ro[t] or t, k)
end

local function w_rawset(...)
  local n, t, k, v = select('#', ...), ...
  need_table('rawset', 1, n, t)
  need_value('rawset', 2, n)
  need_value('rawset', 3, n)
  if ro[t] then error(MODIFY, 0) end
  return rawset(t, k, v)
end

local function w_next(...)
  local n, t, k = select('#', ...), ...
  need_table('next', 1, n, t)
  return next(ro[t] or t, k)
end

local function w_pairs(...)
  local n, t = select('#', ...), ...
  need_table('pairs', 1, n, t)
  if ro[t] then return w_next, t, nil end
  return next, t, nil
end

local string_mt = getmetatable('')

local function w_getmetatable(...)
  local n, v = select('#', ...), ...
  need_value('getmetatable', 1, n)
  if ro[v] then return mt_view[v] end
  local m = getmetatable(v)
  if m == string_mt then return mt_view[string_mt] end
  return m
end

local function w_setmetatable(...)
  local n, t, m = select('#', ...), ...
  need_table('setmetatable', 1, n, t)
  if m ~= nil and type(m) ~= 'table' then
    error("bad argument #2 to 'setmetatable' (nil or table expected)", 2)
  end
  if ro[t] then error(MODIFY, 0) end
  return setmetatable(t, m)
end

local function fix(ok, ...)
  if ok then return true, ... end
  local e = ...
  if type(e) == 'userdata' then e = conv(e) end
  return false, e
end

-- Redis 7.0 keeps errors strings for pcall: an error table gives its `err`.
local function pfix(ok, ...)
  if ok then return true, ... end
  local e = ...
  if type(e) == 'userdata' then e = conv(e) end
  if type(e) == 'table' then
    local s = rawget(e, 'err')
    if type(s) == 'string' or type(s) == 'number' then e = s end
  end
  return false, e
end

local function w_pcall(...)
  need_value('pcall', 1, select('#', ...))
  return pfix(pcall(...))
end

local function w_xpcall(...)
  local n, f, h = select('#', ...), ...
  need_value('xpcall', 2, n)
  return xpcall(f, function(e)
    if type(e) == 'userdata' then e = conv(e) end
    return h(e)
  end)
end

local function w_resume(co, ...)
  if type(co) ~= 'thread' then error("bad argument #1 to 'resume' (coroutine expected)", 2) end
  return fix(resume(co, ...))
end

-- Redis's Lua never loads a precompiled (binary) chunk: it parses every
-- chunk as text, so one that starts with ESC fails as a syntax error.
-- Lua 5.1's loader would undump it, and crafted bytecode escapes any
-- sandbox. A leading blank makes the loader parse text and changes no
-- line number; the chunk name stays what the real function would use.
local loadstring, load, byte = loadstring, load, string.byte

-- Argument errors are raised here, at the script's line, with the
-- messages of Lua's own checks (string or number; nil or none = default).
local function need_string(fname, narg, n, v, optional)
  local t = type(v)
  if t == 'string' or t == 'number' or (optional and v == nil) then return end
  error("bad argument #" .. narg .. " to '" .. fname .. "' (string expected, got " ..
        (n < narg and 'no value' or t) .. ")", 3)
end

local function w_loadstring(...)
  local n, s, name = select('#', ...), ...
  need_string('loadstring', 1, n, s)
  need_string('loadstring', 2, n, name, true)
  if type(s) == 'string' and byte(s, 1) == 27 then
    if name == nil then name = s end
    s = ' ' .. s
  end
  -- A tail call: what the real function returns, no more (its argument
  -- checks were made above, and a C function keeps this frame).
  return loadstring(s, name)
end

local function w_load(...)
  local n, f, name = select('#', ...), ...
  need_string('load', 2, n, name, true)
  if type(f) ~= 'function' then
    error("bad argument #1 to 'load' (function expected, got " ..
          (n < 1 and 'no value' or type(f)) .. ")", 2)
  end
  local first = true
  local function reader()
    local piece = f()
    local t = type(piece)
    if piece ~= nil and t ~= 'string' and t ~= 'number' then
      -- Levels: this reader, the real load, w_load, the script.
      error('reader function must return a string', 4)
    end
    if first then
      first = false
      if t == 'string' and byte(piece, 1) == 27 then return ' ' .. piece end
    end
    return piece
  end
  return load(reader, name)
end

local co = {}
for k, v in next, coroutine do co[k] = v end
co.resume = w_resume

local real = {}
for _, name in ipairs(allow) do real[name] = P[name] end
real.rawget, real.rawset, real.next, real.pairs = w_rawget, w_rawset, w_next, w_pairs
real.getmetatable, real.setmetatable = w_getmetatable, w_setmetatable
real.pcall, real.xpcall = w_pcall, w_xpcall
real.loadstring, real.load = w_loadstring, w_load
real.string = protect(string)
real.table = protect(table)
real.math = protect(math)
real.coroutine = protect(co)
for _, name in ipairs({'bit', 'cjson', 'struct', 'cmsgpack', 'redis'}) do
  real[name] = protect(libs[name])
end
if libs.__err_handler_global then real.__redis__err__handler = handler end
real._G = P
setmetatable(real, {__index = nonexistent})

string_mt.__index = real.string
mt_view[string_mt] = protect(string_mt)

-- The functions engine's load-time globals: only a restricted `redis`.
local load_real
if libs.load_redis then
  setmetatable(libs.load_redis, {__index = nonexistent})
  load_real = setmetatable({redis = protect(libs.load_redis)}, {__index = nonexistent})
end

-- The state's global table becomes the read-only view of `real`.
local keys = {}
for k in next, P do keys[#keys + 1] = k end
for _, k in ipairs(keys) do rawset(P, k, nil) end
local pmt = {__index = real, __newindex = ro_newindex}
setmetatable(P, pmt)
ro[P] = real
mt_view[P] = protect({__index = nonexistent})

return {real = real, pmt = pmt, load_real = load_real, xpcall = xpcall}
