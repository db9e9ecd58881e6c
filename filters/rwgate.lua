-- rwgate's Lua filter for plain pandoc: `pandoc paper.md --lua-filter filters/rwgate.lua -o out.pdf`.
-- The implementation is the Quarto extension's (one file for both): ../_extensions/rwgate/rwgate.lua
-- beside this file in a clone of rwgate, else the one installed with rwgate (`rwgate lua-filter`
-- prints its path). Copied alone, with neither there: one line saying what is missing, exit 2.
local here = pandoc.path.directory(PANDOC_SCRIPT_FILE)
local beside = pandoc.path.join({ here, "..", "_extensions", "rwgate", "rwgate.lua" })

local function exists(path)
  local handle = io.open(path, "r")
  if handle == nil then
    return false
  end
  handle:close()
  return true
end

local path = beside
if not exists(path) then
  local ok, said = pcall(pandoc.pipe, "rwgate", { "lua-filter" }, "")
  path = ok and said:match("^%s*(.-)%s*$") or ""
  if path == "" or not exists(path) then
    io.stderr:write("rwgate: " .. PANDOC_SCRIPT_FILE .. " runs rwgate's rwgate.lua, which is"
      .. " neither at " .. beside .. " nor installed (`rwgate lua-filter`): install rwgate"
      .. " (pip install rwgate) and use --lua-filter \"$(rwgate lua-filter)\", or copy the"
      .. " whole _extensions/rwgate folder of rwgate\n")
    io.stderr:flush()
    os.exit(2)
  end
end
return dofile(path)
