-- SHA-1 in Lua (Neovim has sha256 built in, not sha1): the daemon names its socket after
-- sha1(absolute vault path), so the plugin must compute the same digest to find it.
local bit = require("bit")
local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
local lshift, rshift, rol, tohex = bit.lshift, bit.rshift, bit.rol, bit.tohex

local M = {}

local function add(...)
  local sum = 0
  for i = 1, select("#", ...) do
    sum = sum + select(i, ...)
  end
  return bit.tobit(sum % 4294967296)
end

local function uint32_be(n)
  return string.char(band(rshift(n, 24), 255), band(rshift(n, 16), 255), band(rshift(n, 8), 255), band(n, 255))
end

--- Hex SHA-1 digest of the byte string `msg`.
function M.hex(msg)
  local len = #msg
  local bits_hi = math.floor(len * 8 / 4294967296)
  local bits_lo = (len * 8) % 4294967296
  msg = msg .. "\128" .. string.rep("\0", (55 - len) % 64) .. uint32_be(bits_hi) .. uint32_be(bits_lo)
  local h0, h1, h2, h3, h4 = 0x67452301, bit.tobit(0xEFCDAB89), bit.tobit(0x98BADCFE), 0x10325476, bit.tobit(0xC3D2E1F0)
  local w = {}
  for chunk = 1, #msg, 64 do
    for i = 0, 15 do
      local a, b, c, d = msg:byte(chunk + i * 4, chunk + i * 4 + 3)
      w[i] = bor(lshift(a, 24), lshift(b, 16), lshift(c, 8), d)
    end
    for i = 16, 79 do
      w[i] = rol(bxor(w[i - 3], w[i - 8], w[i - 14], w[i - 16]), 1)
    end
    local a, b, c, d, e = h0, h1, h2, h3, h4
    for i = 0, 79 do
      local f, k
      if i < 20 then
        f, k = bor(band(b, c), band(bnot(b), d)), 0x5A827999
      elseif i < 40 then
        f, k = bxor(b, c, d), 0x6ED9EBA1
      elseif i < 60 then
        f, k = bor(band(b, c), band(b, d), band(c, d)), bit.tobit(0x8F1BBCDC)
      else
        f, k = bxor(b, c, d), bit.tobit(0xCA62C1D6)
      end
      local temp = add(rol(a, 5), f, e, k, w[i])
      a, b, c, d, e = temp, a, rol(b, 30), c, d
    end
    h0, h1, h2, h3, h4 = add(h0, a), add(h1, b), add(h2, c), add(h3, d), add(h4, e)
  end
  return tohex(h0) .. tohex(h1) .. tohex(h2) .. tohex(h3) .. tohex(h4)
end

return M
