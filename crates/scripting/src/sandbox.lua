-- Petrel's Lua sandbox (Redis 7.0 behaviour). Runs once per VM with the
-- unrestricted base functions; see sandbox.rs for the invariants.
local P, libs, allow = ...
local rawset, next, error, setmetatable, getmetatable, tostring, xpcall, ipairs =
      rawset, next, error, setmetatable, getmetatable, tostring, xpcall, ipairs
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

local string_mt = getmetatable('')

local function nonexistent(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end

-- The base functions that must see through proxies, convert Rust errors
-- or refuse bytecode are C functions (builtins.rs), so that errors, names
-- and stack levels are exactly Lua's.
local C = libs.__builtin
local w_rawget, w_rawset, w_next = C('rawget', ro), C('rawset', ro), C('next', ro)
local w_pairs = C('pairs', ro, C('next', ro))
local w_getmetatable = C('getmetatable', ro, mt_view, string_mt)
local w_setmetatable = C('setmetatable', ro)
local w_pcall, w_xpcall = C('pcall', conv), C('xpcall', conv)
local w_resume = C('resume', conv, resume)
local w_loadstring, w_load = C('loadstring'), C('load')

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
