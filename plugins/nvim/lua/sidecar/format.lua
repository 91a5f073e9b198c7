-- Daemon results -> picker items and quickfix entries. Pure functions over decoded JSON.
local taxonomy = require("sidecar.taxonomy")

local M = {}

local function join(vault, rel)
  if rel == nil or rel == vim.NIL or rel == "" then
    return nil
  end
  if rel:sub(1, 1) == "/" then
    return rel
  end
  return vault .. "/" .. rel
end

local function first_line(text)
  text = (text or ""):gsub("%s+", " ")
  return vim.trim(text)
end

local function name(path)
  return (path:gsub("^.*/", ""):gsub("%.md$", ""))
end

function M.inverse(relation)
  if vim.tbl_contains(taxonomy.symmetric, relation) then
    return relation
  end
  if taxonomy.pairs[relation] then
    return taxonomy.pairs[relation]
  end
  for fwd, inv in pairs(taxonomy.pairs) do
    if inv == relation then
      return fwd
    end
  end
  return nil
end

--- note.backlinks -> one item per link: "source:line  context".
function M.backlinks(vault, result)
  local items = {}
  for _, b in ipairs(result.backlinks or {}) do
    local where = b.line > 0 and (":" .. b.line) or " (frontmatter)"
    local rel = b.relation ~= "link" and (" [" .. b.relation .. "]") or ""
    table.insert(items, {
      label = b.source .. where .. rel .. "  " .. first_line(b.context),
      path = join(vault, b.source),
      lnum = b.line,
    })
  end
  return items
end

--- note.links -> typed relations from both ends, labelled as seen from this note.
function M.relations(vault, result)
  local items, seen = {}, {}
  local function add(relation, other, how, lnum, source)
    local key = relation .. "\0" .. tostring(other)
    if seen[key] then
      seen[key].how = "both ends"
      seen[key].label = ("%s → %s  (%s)"):format(relation, name(other), "both ends")
      return
    end
    local item = {
      label = ("%s → %s  (%s)"):format(relation, name(other or "?"), how),
      path = join(vault, other),
      lnum = lnum,
      relation = relation,
      how = how,
      source = source,
    }
    seen[key] = item
    table.insert(items, item)
  end
  for _, e in ipairs(result.outgoing or {}) do
    if e.relation ~= "link" then
      local target = e.target ~= vim.NIL and e.target or nil
      add(e.relation, target or e.raw, target and "stated" or "broken", 1, result.path)
    end
  end
  for _, e in ipairs(result.incoming or {}) do
    if e.relation ~= "link" then
      local inverse = M.inverse(e.relation)
      if inverse then
        add(inverse, e.source, "implied", e.line, e.source)
      else
        add("← " .. e.relation, e.source, "stated there", e.line, e.source)
      end
    end
  end
  table.sort(items, function(a, b)
    return a.relation == b.relation and a.label < b.label or a.relation < b.relation
  end)
  return items
end

function M.search(vault, result)
  local items = {}
  for _, h in ipairs(result.results or {}) do
    local by = type(h.superseded_by) == "table" and h.superseded_by[1] or h.superseded_by
    local newest = type(h.current) == "string" and h.current or (type(by) == "string" and by or nil)
    local stale = newest and (" [superseded → " .. name(newest) .. "]") or ""
    table.insert(items, {
      label = ("%s:%d  %s%s  %s"):format(h.path, h.start_line, h.heading or "", stale, first_line(h.snippet)),
      path = join(vault, h.path),
      lnum = h.start_line,
    })
  end
  return items
end

local QF_TYPE = { error = "E", warning = "W", info = "I" }

--- lint.run -> quickfix entries, errors first.
function M.quickfix(vault, result)
  local entries = {}
  for _, f in ipairs(result.findings or {}) do
    local fix = (f.fix and f.fix ~= "") and (" — " .. f.fix) or ""
    table.insert(entries, {
      filename = join(vault, f.note),
      lnum = math.max(1, f.line or 1),
      col = 1,
      type = QF_TYPE[f.severity] or "I",
      text = ("[%s] %s%s"):format(f.rule, f.detail, fix),
    })
  end
  local rank = { E = 0, W = 1, I = 2 }
  table.sort(entries, function(a, b)
    if a.type ~= b.type then
      return rank[a.type] < rank[b.type]
    end
    if a.filename ~= b.filename then
      return a.filename < b.filename
    end
    return a.lnum < b.lnum
  end)
  return entries
end

function M.reminders(vault, result)
  local items = {}
  for _, group in ipairs({ { "due", result.due or {} }, { "upcoming", result.upcoming or {} } }) do
    for _, r in ipairs(group[2]) do
      table.insert(items, {
        label = ("[%s] %s  (%s)"):format(group[1], r.title or r.id, r.due_at or ""),
        path = join(vault, r.path),
        lnum = 1,
        id = r.id,
      })
    end
  end
  return items
end

--- "/l query" -> "lexical", "query" (the Obsidian palette's prefixes).
function M.search_input(input, default_mode)
  local prefix, rest = input:match("^%s*/(%a+)%s+(.*)$")
  local modes = { l = "lexical", lexical = "lexical", s = "semantic", semantic = "semantic", h = "hybrid", hybrid = "hybrid" }
  if prefix and modes[prefix] then
    return modes[prefix], vim.trim(rest)
  end
  return default_mode, vim.trim(input)
end

return M
