-- Results in a picker: telescope when it is installed, vim.ui.select otherwise. Each item is
-- { label = "...", path = "/abs/file.md", lnum = 12 }; choosing one opens the file at the line.
local M = {}

--- Open `item.path` at `item.lnum` (1-based; 0 or nil means the top).
function M.open(item)
  if item == nil or item.path == nil then
    return
  end
  vim.cmd("edit " .. vim.fn.fnameescape(item.path))
  local last = vim.api.nvim_buf_line_count(0)
  local lnum = math.max(1, math.min(item.lnum or 1, last))
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
end

local function telescope(title, items, on_choice)
  local ok, pickers = pcall(require, "telescope.pickers")
  if not ok then
    return false
  end
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = title,
      finder = finders.new_table({
        results = items,
        entry_maker = function(item)
          return {
            value = item,
            display = item.label,
            ordinal = item.label,
            filename = item.path,
            lnum = math.max(1, item.lnum or 1),
          }
        end,
      }),
      sorter = conf.generic_sorter({}),
      previewer = conf.grep_previewer({}),
      attach_mappings = function(bufnr)
        actions.select_default:replace(function()
          local entry = state.get_selected_entry()
          actions.close(bufnr)
          if entry then
            on_choice(entry.value)
          end
        end)
        return true
      end,
    })
    :find()
  return true
end

--- Show `items` under `title`; `on_choice(item)` defaults to opening the item.
function M.pick(title, items, on_choice, opts)
  on_choice = on_choice or M.open
  if #items == 0 then
    vim.notify("sidecar: " .. title .. ": nothing found", vim.log.levels.INFO)
    return
  end
  local use_telescope = (opts or {}).telescope
  if use_telescope ~= false and telescope(title, items, on_choice) then
    return
  end
  vim.ui.select(items, {
    prompt = title,
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if choice then
      on_choice(choice)
    end
  end)
end

return M
