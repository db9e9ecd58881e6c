--[[
rwgate.lua: the rwgate gate as a Lua filter, for Quarto (this folder is a Quarto extension) and for
plain pandoc (`pandoc paper.md --lua-filter filters/rwgate.lua -o paper.pdf`).

Why a Lua filter: Quarto runs every user filter before citeproc, and pandoc runs citeproc where
`--citeproc` stands; a filter that judges the rendered bibliography must see it. This one renders it
itself, with pandoc's own citeproc (`pandoc.utils.citeproc`, as Quarto's docusaurus format does),
hands the document to `rw-filter` (the integrity core; one Python process) and returns what that
gives back: flagged entries annotated, or the build stopped. It then makes a later citeproc run
(Quarto's, or a `--citeproc` after this filter) a no-op: the rendered citations become
`span.citation[data-cites]` (what citeproc's HTML looks like; Quarto's hover popups read it) and the
bibliography metadata is dropped, so nothing is rendered twice.

Not rendered here: natbib and biblatex output (`cite-method`, `--natbib`, `--biblatex`), where
rw-filter points the bibliography at an annotated copy instead, and documents without a
bibliography.

Contract:
* The integrity core is `rw-filter` on PATH, or the program named by RWGATE_FILTER (the invoking
  user's environment; never the document's metadata).
* Exit status: rw-filter's (1: the policy failed, 2: bad input), after its own `rw-filter: ERROR`
  lines and one `rwgate:` line saying the build was stopped. rw-filter missing: exit 2 with one line
  saying how to install it. Nothing is ever written when the gate stops the build.
* Policy comes from the document's `rwgate:` metadata and rwgate's configuration, as for rw-filter.
]]

local FILTER = os.getenv("RWGATE_FILTER")
if FILTER == nil or FILTER == "" then
  FILTER = "rw-filter"
end

local function stop(code, message)
  io.stderr:write("rwgate: " .. message .. "\n")
  io.stderr:flush()
  os.exit(code)
end

local function rendered(doc)
  local found = false
  doc:walk({
    Div = function(div)
      if div.classes:includes("csl-bib-body") then
        found = true
      end
    end,
  })
  return found
end

local function wants_citeproc(doc)
  local method = PANDOC_WRITER_OPTIONS and PANDOC_WRITER_OPTIONS.cite_method or "citeproc"
  local meta = doc.meta
  return method == "citeproc" and (meta.bibliography ~= nil or meta.references ~= nil)
end

-- After citeproc: citations as spans, no bibliography to render again.
local function settle(doc)
  doc = doc:walk({
    Cite = function(cite)
      local ids = {}
      for _, citation in ipairs(cite.citations) do
        ids[#ids + 1] = citation.id
      end
      return pandoc.Span(cite.content, { class = "citation", ["data-cites"] = table.concat(ids, " ") })
    end,
  })
  doc.meta.bibliography = nil
  doc.meta.references = nil
  doc.meta.nocite = nil
  return doc
end

local function judge(doc)
  local ok, result = pcall(pandoc.pipe, FILTER, { FORMAT }, pandoc.write(doc, "json"))
  if ok then
    return pandoc.read(result, "json")
  end
  if type(result) == "table" and result.error_code ~= nil then
    local code = tonumber(result.error_code) or 1
    if code == 127 then
      stop(2, FILTER .. " not found: install rwgate (pip install rwgate) or set RWGATE_FILTER")
    end
    stop(code, "the integrity gate stopped the build (see the rw-filter lines above)")
  end
  stop(2, "could not run " .. FILTER .. " (" .. tostring(result) .. "): install rwgate"
    .. " (pip install rwgate) or set RWGATE_FILTER")
end

function Pandoc(doc)
  local ran = false
  if wants_citeproc(doc) and not rendered(doc) then
    doc = pandoc.utils.citeproc(doc)
    ran = true
  end
  doc = judge(doc)
  if ran then
    doc = settle(doc)
  end
  return doc
end

return { { Pandoc = Pandoc } }
