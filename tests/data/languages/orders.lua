local json = require("cjson")
local util = require "acme.util"

local M = {}

--- Sums the quantities of the lines the filter keeps.
-- @param lines a list of lines
function M.total_quantity(lines, keep)
  keep = keep or function(_) return true end
  local total = 0
  for _, line in ipairs(lines) do
    if keep(line) then total = total + line.quantity end
  end
  return total
end

--- Reads a line written as SKU x QUANTITY.
function M.parse(text)
  local sku, quantity = text:match("(%S+) x (%d+)")
  return { sku = sku, quantity = tonumber(quantity) }
end

local Store = {}
Store.__index = Store

--- Makes an empty order store.
function Store.new()
  return setmetatable({ saved = {} }, Store)
end

function Store:save(order_id, lines)
  self.saved[order_id] = lines
end

local by_quantity = function(a, b)
  return a.quantity < b.quantity
end

return M
