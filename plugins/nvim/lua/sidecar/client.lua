-- The daemon's socket client: a libuv pipe, NDJSON framing, request ids, a pending table,
-- notifications. libuv callbacks run outside Neovim's main loop, so every line is handled in
-- vim.schedule() and callbacks may use the API freely. Works with vim.uv (0.10+) or vim.loop.
local uv = vim.uv or vim.loop
local methods = require("sidecar.methods")

local M = {}

-- Built into the socket server, not in the registry (sidecar/transports/unix.py).
M.builtin = { ["events.subscribe"] = { "events" }, ["events.unsubscribe"] = { "events" } }

local Client = {}
Client.__index = Client

--- Check a call against the generated registry: an unknown method or parameter is a bug in
--- the plugin (or a stale methods.lua), reported before anything is sent.
function M.check(method, params)
  local spec = methods[method]
  local names = spec and spec.params or M.builtin[method]
  if names == nil then
    return ("unknown method %q (regenerate methods.lua: python -m sidecar.api.typegen)"):format(method)
  end
  local known = {}
  for _, n in ipairs(names) do
    known[n] = true
  end
  for key in pairs(params or {}) do
    if not known[key] then
      return ("method %s has no parameter %q"):format(method, tostring(key))
    end
  end
  for _, req in ipairs(spec and spec.required or {}) do
    if (params or {})[req] == nil then
      return ("method %s needs parameter %q"):format(method, req)
    end
  end
  return nil
end

function M.new(opts)
  local self = setmetatable({}, Client)
  self.path = opts.path
  self.timeout = opts.timeout or 30000
  self.on_notification = opts.on_notification
  self.on_connect = opts.on_connect
  self.on_lost = opts.on_lost
  self.pipe = nil
  self.state = "down" -- down | connecting | connected | closed
  self.next_id = 1
  self.pending = {}
  self.queue = {}
  self.buffer = ""
  self.last_error = nil
  return self
end

function Client:_fail_all(message)
  local pending = self.pending
  self.pending = {}
  for _, p in pairs(pending) do
    if p.timer then
      p.timer:stop()
      p.timer:close()
    end
    p.cb({ code = -32006, message = message }, nil)
  end
  local queued = self.queue
  self.queue = {}
  for _, q in ipairs(queued) do
    q.cb({ code = -32006, message = message }, nil)
  end
end

function Client:_lost(reason)
  if self.pipe and not self.pipe:is_closing() then
    self.pipe:close()
  end
  self.pipe = nil
  if self.state ~= "closed" then
    self.state = "down"
  end
  self.last_error = reason
  self:_fail_all("connection to the sidecar daemon lost: " .. reason)
  if self.on_lost and self.state ~= "closed" then
    self.on_lost(reason)
  end
end

function Client:_handle(line)
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    return
  end
  if msg.method ~= nil and msg.id == nil then
    if self.on_notification then
      self.on_notification(msg.method, msg.params or {})
    end
    return
  end
  local p = msg.id ~= nil and self.pending[msg.id] or nil
  if p == nil then
    return
  end
  self.pending[msg.id] = nil
  if p.timer then
    p.timer:stop()
    p.timer:close()
  end
  if msg.error ~= nil then
    p.cb(msg.error, nil)
  else
    p.cb(nil, msg.result)
  end
end

function Client:_feed(data)
  self.buffer = self.buffer .. data
  while true do
    local nl = self.buffer:find("\n", 1, true)
    if nl == nil then
      break
    end
    local line = self.buffer:sub(1, nl - 1)
    self.buffer = self.buffer:sub(nl + 1)
    if line:match("%S") then
      self:_handle(line)
    end
  end
end

--- Connect (once); queued requests go out when connected. `cb(err)` runs on the main loop.
function Client:connect(cb)
  cb = cb or function() end
  if self.state == "connected" then
    return cb(nil)
  end
  if self.state == "connecting" then
    table.insert(self.queue, { connect_cb = cb, cb = function(err) cb(err) end })
    return
  end
  if self.path == nil or self.path == "" then
    self.last_error = "no daemon socket found for this vault"
    return cb(self.last_error)
  end
  self.state = "connecting"
  self.buffer = ""
  local pipe = uv.new_pipe(false)
  pipe:connect(self.path, function(err)
    vim.schedule(function()
      if err then
        if not pipe:is_closing() then
          pipe:close()
        end
        self.state = "down"
        self.last_error = err .. ": " .. self.path
        self:_fail_all("cannot connect to the sidecar daemon at " .. self.path .. ": " .. err)
        return cb(self.last_error)
      end
      self.pipe = pipe
      self.state = "connected"
      self.last_error = nil
      pipe:read_start(function(rerr, data)
        vim.schedule(function()
          if self.pipe ~= pipe then
            return
          end
          if rerr then
            self:_lost(rerr)
          elseif data == nil then
            self:_lost("the daemon closed the connection")
          else
            self:_feed(data)
          end
        end)
      end)
      local queued = self.queue
      self.queue = {}
      for _, q in ipairs(queued) do
        if q.connect_cb then
          q.connect_cb(nil)
        else
          self:_send(q.method, q.params, q.cb)
        end
      end
      if self.on_connect then
        self.on_connect(self)
      end
      cb(nil)
    end)
  end)
end

function Client:_send(method, params, cb)
  local id = self.next_id
  self.next_id = id + 1
  if params == nil or next(params) == nil then
    params = vim.empty_dict() -- {} would be encoded as a JSON array
  end
  local line = vim.json.encode({ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n"
  local timer = uv.new_timer()
  self.pending[id] = { cb = cb, timer = timer }
  timer:start(self.timeout, 0, function()
    vim.schedule(function()
      local p = self.pending[id]
      if p == nil then
        return
      end
      self.pending[id] = nil
      timer:close()
      cb({ code = -32006, message = ("%s: no answer within %d ms"):format(method, self.timeout) }, nil)
    end)
  end)
  self.pipe:write(line)
end

--- Call `method`; `cb(err, result)` runs on the main loop. `err` is the JSON-RPC error object.
function Client:request(method, params, cb)
  local problem = M.check(method, params)
  if problem then
    return vim.schedule(function()
      cb({ code = -32602, message = problem }, nil)
    end)
  end
  if self.state == "connected" then
    return self:_send(method, params, cb)
  end
  table.insert(self.queue, { method = method, params = params, cb = cb })
  if self.state ~= "connecting" then
    self:connect(function() end)
  end
end

--- Blocking call for scripts and tests: (result, err), waiting at most `timeout` ms.
function Client:request_sync(method, params, timeout)
  local done, result, err = false, nil, nil
  self:request(method, params, function(e, r)
    done, result, err = true, r, e
  end)
  local ok = vim.wait(timeout or self.timeout, function()
    return done
  end, 10)
  if not ok then
    return nil, { code = -32006, message = method .. ": timed out" }
  end
  return result, err
end

function Client:close()
  self.state = "closed"
  local pipe = self.pipe
  self.pipe = nil
  if pipe and not pipe:is_closing() then
    pipe:close()
  end
  self:_fail_all("the sidecar client was closed")
end

return M
