--[[
rwgate.lua: the rwgate gate as a Lua filter, for Quarto (this folder is a Quarto extension) and for
plain pandoc (`pandoc paper.md --lua-filter filters/rwgate.lua -o paper.pdf`).

Why a Lua filter: Quarto runs every user filter before citeproc, and pandoc runs citeproc where
`--citeproc` stands; a filter that judges the rendered bibliography must see it. This one renders it
itself, with pandoc's own citeproc (`pandoc.utils.citeproc`, as Quarto's docusaurus format does),
hands the document to `rw-filter --verdicts` (the integrity core; one Python process, or a run in
rwgate's resident worker) and places the notices it answers with in the flagged entries itself, or
returns the document rw-filter placed them in where it cannot (shadow .bib files, citation markers,
JATS); or the build is stopped. It then makes a later citeproc run
(Quarto's, or a `--citeproc` after this filter) a no-op: the rendered citations become
`span.citation[data-cites]` (what citeproc's HTML looks like; Quarto's hover popups read it) and the
bibliography metadata is dropped, so nothing is rendered twice.

Not rendered here: natbib and biblatex output (`cite-method`, `--natbib`, `--biblatex`), where
rw-filter points the bibliography at an annotated copy and puts the notice after each citation
(a .bst may never print the copy's `note`), and documents without a bibliography. With
`suppress-bibliography` the rendered document has no entries: rw-filter puts the notice after each
citation. A flagged work whose notice the output cannot show (cited only through `nocite` with no
entry) stops the build, as in rw-filter (see rwgate.frontends.pandoc.filter: one rule for every pipeline).

Contract:
* The integrity core is `rw-filter` on PATH, or the program named by RWGATE_FILTER (the invoking
  user's environment; never the document's metadata).
* Exit status: rw-filter's (1: the policy failed, 2: bad input), after its own `rw-filter: ERROR`
  lines and one `rwgate:` line saying the build was stopped. rw-filter missing: exit 2 with one line
  saying how to install it. Nothing is ever written when the gate stops the build.
* Policy comes from the document's `rwgate:` metadata and rwgate's configuration, as for rw-filter.
* pandoc 2.17 (Debian 12's) and newer (rwgate.readers.pandoc_exe); older: exit 2 with one line naming
  the version, the floor and what to do. pandoc.utils.citeproc arrived in 2.19.1: on 2.17 to 2.19.0
  the bibliography is rendered by this very pandoc binary run as a JSON-to-JSON citeproc (Linux),
  under rwgate's bounds (1 GB heap, 60 s: RWGATE_PANDOC_HEAP_MB / RWGATE_PANDOC_SECONDS), each
  bound's breach one `split the document` line, exit 2.
* Rebuilds: a build whose citation inputs did not change replays the last verdict without starting
  Python. The memo's name covers what is asked (the output format, the working directory, the cited
  ids, the `bibliography`/`references`/`rwgate`/`nocite` metadata, which rw-filter); rw-filter
  writes it there (in RWGATE_CACHE_DIR, else the XDG cache folder, `rwgate/filter-memo/`) with the
  record of everything its run read (rwgate.settings.recorded: each file by sha1, files looked for and
  absent, each environment variable the configuration consulted, the snapshot's import id,
  rwgate's code, the earliest expiry), and this filter replays it only when every recorded input
  still holds: it keeps no list of inputs of its own. Only a failed gate or notices in rendered
  entries are replayed here; anything else goes to rw-filter. RWGATE_NO_MEMO=1 (or RWGATE_NO_CACHE)
  turns it off.
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

-- The supported pandoc range (rwgate.readers.pandoc_exe): 2.17 (Debian 12's) and newer. Below it, one
-- line naming the version, the floor and what to do, before anything is read.
local FLOOR = { 2, 17 }
local function below(version, floor)
  for i = 1, #floor do
    local part = tonumber(version[i]) or 0
    if part ~= floor[i] then
      return part < floor[i]
    end
  end
  return false
end
local VERSION = tostring(PANDOC_VERSION)
if PANDOC_VERSION == nil or below(PANDOC_VERSION, FLOOR) then
  stop(2, "pandoc " .. VERSION .. " is older than 2.17, the oldest the Lua filter supports: "
    .. "install a newer pandoc (https://pandoc.org/installing.html) or put the one "
    .. "`pip install pypandoc-binary` ships first on PATH")
end

local function positive(name, default)
  local value = tonumber(os.getenv(name) or "")
  return (value and value > 0) and math.floor(value) or default
end

-- pandoc's citeproc on `doc`: `pandoc.utils.citeproc` (pandoc 2.19.1 and later), else (2.17 to
-- 2.19.0) this very pandoc binary run as a JSON-to-JSON citeproc (`/proc/PPID/exe` of the shell
-- it is started from: Linux), under rwgate's bounds (pandoc_exe.run_bounded: heap by `+RTS -M`,
-- time by `timeout`); its failure, or no such binary, is one line.
local function citeproc(doc)
  if pandoc.utils.citeproc ~= nil then
    return pandoc.utils.citeproc(doc)
  end
  local seconds = positive("RWGATE_PANDOC_SECONDS", 60)
  local heap = positive("RWGATE_PANDOC_HEAP_MB", 1024)
  local errors = os.tmpname()
  local script = 'exe=$(readlink "/proc/$PPID/exe") && [ -x "$exe" ] || exit 126; '
    .. 'exec timeout "$0" "$exe" +RTS "-M$1m" -RTS --from=json --to=json --citeproc 2>"$2"'
  local ok, result = pcall(pandoc.pipe, "sh", { "-c", script, tostring(seconds), tostring(heap),
    errors }, pandoc.write(doc, "json"))
  local said, handle = "", io.open(errors, "r")
  if handle then
    said = handle:read("a") or ""
    handle:close()
  end
  os.remove(errors)
  if ok then
    return pandoc.read(result, "json")
  end
  local code = type(result) == "table" and tonumber(result.error_code) or nil
  if code == 124 then
    stop(2, "pandoc's citeproc took longer than " .. seconds .. " s; split the document")
  elseif said:find("Heap exhausted", 1, true) then
    stop(2, "pandoc's citeproc needed more than " .. heap .. " MB; split the document")
  elseif code == 126 or code == 127 then
    stop(2, "pandoc " .. VERSION .. " has no pandoc.utils.citeproc (2.19.1) and its binary "
      .. "cannot be run here: use pandoc 2.19.1 or newer, or rw-filter after --citeproc")
  end
  local first = said:match("[^\n]+") or ("exit " .. tostring(code))
  stop(2, "pandoc's citeproc failed: " .. first)
end

local function wants_citeproc(doc)
  local method = PANDOC_WRITER_OPTIONS and PANDOC_WRITER_OPTIONS.cite_method or "citeproc"
  local meta = doc.meta
  return method == "citeproc" and (meta.bibliography ~= nil or meta.references ~= nil)
end

local SPAN = pandoc.Span({})

-- The cited ids, in blocks and metadata (a walk: a citation anywhere must change the memo key),
-- and, when `settle` (after this filter's own citeproc), the document settled: citations as spans
-- (what citeproc's HTML looks like; Quarto's hover popups read it) and no bibliography metadata,
-- so that a later citeproc (Quarto's, or a `--citeproc` after this filter) has nothing to render.
-- One walk for both: a walk through the inlines is most of what this filter costs, since pandoc
-- rebuilds the tree as it walks, and the allocation brings its garbage collections forward.
local function citations(doc, settle)
  local ids = {}
  local walked = doc:walk({
    Cite = function(cite)
      local own = {}
      for _, citation in ipairs(cite.citations) do
        own[#own + 1] = citation.id
        ids[#ids + 1] = citation.id
      end
      if settle then
        local span = SPAN:clone() -- its content set, not passed to pandoc.Span: read back once
        span.attr = { class = "citation", ["data-cites"] = table.concat(own, " ") }
        span.content = cite.content
        return span
      end
    end,
  })
  if not settle then
    return ids, doc
  end
  walked.meta.bibliography = nil
  walked.meta.references = nil
  walked.meta.nocite = nil
  return ids, walked
end

local place_answer -- below, with the placement

-- rw-filter judges `doc`. With --verdicts it answers with the notices alone where this filter can
-- place them exactly as rw-filter would (rwgate.frontends.pandoc.lua), and with the document where
-- it cannot (shadow .bib files, citation markers, JATS, unusual entries). The notices go into
-- `settled` (doc, or doc settled after this filter's own citeproc: `citations`); a document
-- answered is settled here when `settled` is not doc itself.
-- How rw-filter is started: as it is, except under R (rmarkdown, bookdown), whose start-up script
-- (R_HOME/etc/ldpaths) puts R's library folders before LD_LIBRARY_PATH for its own libraries:
-- R_HOME/lib, the system's multiarch folder, Java's lib/server. They are taken off again for
-- rw-filter, whose Python would otherwise load the system's libpython in place of its own (a
-- shared-library pyenv Python then fails to import `_ssl`); what the user had set stays.
local function from_r(entry, r_home)
  return entry == r_home .. "/lib" or entry:match("^/usr/lib/[%w_]+%-linux%-gnu$") ~= nil
    or entry:match("/lib/server$") ~= nil
end

local function filter_command(args)
  local r_home, paths = os.getenv("R_HOME"), os.getenv("LD_LIBRARY_PATH")
  local r_lib = r_home and (r_home .. "/lib") or nil
  if r_lib == nil or paths == nil or (paths .. ":"):sub(1, #r_lib + 1) ~= r_lib .. ":" then
    return FILTER, args
  end
  local rest, kept = {}, false
  for entry in paths:gmatch("[^:]+") do
    kept = kept or not from_r(entry, r_home)
    if kept then
      rest[#rest + 1] = entry
    end
  end
  local cmd = #rest == 0 and { "-u", "LD_LIBRARY_PATH" }
    or { "LD_LIBRARY_PATH=" .. table.concat(rest, ":") }
  cmd[#cmd + 1] = FILTER
  for _, arg in ipairs(args) do
    cmd[#cmd + 1] = arg
  end
  return "env", cmd
end

local function judge(doc, settled, memo, whole)
  local args = { FORMAT }
  if pandoc.json ~= nil and not whole then
    args[#args + 1] = "--verdicts"
  end
  if memo then
    args[#args + 1] = "--lua-memo"
    args[#args + 1] = memo
  end
  local program, argv = filter_command(args)
  local ok, result = pcall(pandoc.pipe, program, argv, pandoc.write(doc, "json"))
  if ok then
    if result:sub(1, 10) == '{"layout":' then
      return place_answer(settled, pandoc.json.decode(result, false))
        or judge(doc, settled, nil, true)
    end
    local judged = pandoc.read(result, "json")
    if rawequal(settled, doc) then
      return judged
    end
    local _, done = citations(judged, true)
    return done
  end
  if type(result) == "table" and result.error_code ~= nil then
    local code = tonumber(result.error_code) or 1
    if code == 127 then
      stop(2, FILTER .. " not found: install rwgate (pip install . in a clone of rwgate)"
        .. " or set RWGATE_FILTER")
    end
    stop(code, "the integrity gate stopped the build (see the rw-filter lines above)")
  end
  stop(2, "could not run " .. FILTER .. " (" .. tostring(result) .. "): install rwgate"
    .. " (pip install . in a clone of rwgate) or set RWGATE_FILTER")
end

-- The verdict memo (see the header) ---------------------------------------------------------

local function read(path)
  local handle = io.open(path, "rb")
  if handle == nil then
    return nil
  end
  local data = handle:read("a") -- nil for a folder, as Python's read finds none
  handle:close()
  return data
end

-- Whether citeproc has run: its list is a Div.csl-bib-body, found by descending through Divs.
local function rendered(blocks)
  for _, block in ipairs(blocks) do
    if block.t == "Div" and (block.classes:includes("csl-bib-body") or rendered(block.content)) then
      return true
    end
  end
  return false
end

-- RWGATE_NO_MEMO, read as rwgate.settings.files.memo_disabled reads it.
local function memo_off()
  local value = os.getenv("RWGATE_NO_MEMO")
  if value == nil then
    return false
  end
  value = value:match("^%s*(.-)%s*$"):lower()
  return not (value == "" or value == "0" or value == "false" or value == "no" or value == "off")
end

-- Where rw-filter's memos live (rwgate.verdicts.remembered.memo_base): the invoking user's cache folder.
local function cache_dir()
  local dir = os.getenv("RWGATE_CACHE_DIR")
  if dir ~= nil and dir:match("%S") then
    return dir:match("^%s*(.-)%s*$")
  end
  local base = os.getenv("XDG_CACHE_HOME")
  if base == nil or base == "" then
    local home = os.getenv("HOME")
    if home == nil or pandoc.system.os ~= "linux" then
      return nil -- platformdirs' folder elsewhere: no fast path
    end
    base = pandoc.path.join({ home, ".cache" })
  end
  return pandoc.path.join({ base, "rwgate" })
end

-- The memo's name says what was asked (the document's citations and citation metadata, the
-- format, the folder, which rw-filter, and the entries citeproc printed: rw-filter verified
-- them against what it judged, DESIGN.md rule 2, so entries printed otherwise, as by another
-- CSL style, are verified again); what the answer read is in the record rw-filter writes.
local function memo_path(doc, ids, own, printed)
  if pandoc.json == nil or memo_off() or os.getenv("RWGATE_NO_CACHE") ~= nil then
    return nil
  end
  local folder = cache_dir()
  if folder == nil then
    return nil
  end
  local meta = { bibliography = doc.meta.bibliography, references = doc.meta.references,
    rwgate = doc.meta.rwgate, nocite = doc.meta.nocite }
  local parts = { "rwgate-lua/3", FORMAT, pandoc.system.get_working_directory(),
    own and "own citeproc" or "", FILTER, os.getenv("PATH") or "", table.concat(ids, "\1"),
    pandoc.write(pandoc.Pandoc({}, meta), "json"), printed() }
  local key = pandoc.sha1(table.concat(parts, "\0"))
  return pandoc.path.join({ folder, "filter-memo", "lua-" .. key .. ".json" })
end

local function hex(bytes)
  return (bytes:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

-- rwgate.settings.recorded.snapshot_id: the import id in the SQLite header (nil: no file there).
local function snapshot_id(path)
  local handle = io.open(path, "rb")
  if handle == nil then
    return nil
  end
  local head = handle:read(100) or ""
  handle:close()
  if #head < 100 or head:sub(1, 16) ~= "SQLite format 3\0" then
    return ""
  end
  local id = hex(head:sub(61, 64) .. head:sub(69, 72))
  return id == string.rep("0", 16) and "" or id
end

-- rwgate.settings.recorded.still_true, in Lua: every input the record names is as it was. No list of
-- names here: the record lists what rw-filter's run read, and each is checked.
local function holds(record)
  local null = pandoc.json.null
  if record.layout ~= "rwgate-record/1" or type(record.expires) ~= "number"
    or record.expires <= os.time() + 1 then -- os.time() is whole seconds
    return false
  end
  for name, value in pairs(record.env) do
    if os.getenv(name) ~= (value ~= null and value or nil) then
      return false
    end
  end
  for name, digest in pairs(record.files) do
    local data = read(name)
    if (data and pandoc.sha1(data) or null) ~= digest then
      return false
    end
  end
  if next(record.derived) ~= nil then
    return false -- Python-only checks
  end
  if record.snapshot_path ~= null
    and (snapshot_id(record.snapshot_path) or null) ~= record.snapshot_id then
    return false
  end
  local lines = {}
  for _, name in ipairs(record.code_files) do
    local data = read(record.code_root .. "/" .. name)
    if data == nil then
      return false
    end
    lines[#lines + 1] = name .. "\0" .. pandoc.sha1(data) .. "\n"
  end
  return pandoc.sha1(table.concat(lines)) == record.code_id
end

-- JSON nulls as Lua nils in the notices (a notice without a DOI has neither DOI nor link).
local function without_nulls(annotations)
  for _, annotation in pairs(annotations) do
    for _, name in ipairs({ "notice_doi", "url" }) do
      if annotation[name] == pandoc.json.null then
        annotation[name] = nil
      end
    end
  end
  return annotations
end

local function remembered(path)
  local data = path and read(path)
  if data == nil then
    return nil
  end
  local ok, record = pcall(pandoc.json.decode, data, false)
  if not ok or type(record) ~= "table" then
    return nil
  end
  local fine, good = pcall(holds, record)
  local memo = record.payload
  if not fine or not good or type(memo) ~= "table" or memo.layout ~= 1 then
    return nil
  end
  without_nulls(memo.annotations or {})
  return memo
end

-- The same placement as rw-filter's (rwgate.frontends.pandoc.render): bold, after the entry's text.
local function notice(annotation)
  local text, doi = annotation.text, annotation.notice_doi
  local inlines = pandoc.Inlines({})
  local at = doi and text:find(doi, 1, true)
  if at then
    inlines:extend(pandoc.Inlines(text:sub(1, at - 1)))
    inlines:insert(pandoc.Link(doi, annotation.url or ("https://doi.org/" .. doi)))
    inlines:extend(pandoc.Inlines(text:sub(at + #doi)))
  else
    inlines:extend(pandoc.Inlines(text))
  end
  local attributes = {}
  if FORMAT == "docx" or FORMAT == "odt" then
    attributes["custom-style"] = "Retraction Notice"
  end
  local classes = { "rw-notice", "rw-" .. annotation.status }
  return pandoc.Span({ pandoc.Strong(inlines) }, pandoc.Attr("", classes, attributes))
end

local function entry_key(id, annotations)
  if annotations[id] then
    return id
  end
  local base = id:match("^(.+)%-%-[%d%.]+$") or id:match("^(.+)%-%-%x+$")
  if base and annotations[base] then
    return base
  end
  return nil
end

-- Entries are found by descending through Divs only (citeproc's list is a Div of Divs), and
-- changed in place: no walk through the prose, whose inlines are most of a document.
local function each_entry(blocks, visit)
  for _, block in ipairs(blocks) do
    if block.t == "Div" then
      if block.classes:includes("csl-entry") and block.identifier:sub(1, 4) == "ref-" then
        visit(block)
      else
        each_entry(block.content, visit)
      end
    end
  end
end

local function annotate_entry(div, annotation)
  local span = notice(annotation)
  for _, block in ipairs(div.content) do
    if block.t == "Para" or block.t == "Plain" then
      for _, inline in ipairs(block.content) do
        if inline.t == "Span" and inline.classes:includes("csl-right-inline") then
          inline.content:extend({ pandoc.Space(), span })
          return
        end
      end
    end
  end
  local last = div.content[#div.content]
  if last and (last.t == "Para" or last.t == "Plain") then
    last.content:extend({ pandoc.Space(), span })
  else
    div.content:insert(pandoc.Plain({ span }))
  end
end

-- Each entry Div gets the notice of the key `key_of(div)` names; nil if some annotated key's entry
-- is not met (rw-filter then places the notices, as it always could, and marks the citations).
local function place_by(doc, annotations, key_of)
  local found, placed = {}, {}
  each_entry(doc.blocks, function(div)
    local key = key_of(div)
    if key ~= nil and annotations[key] ~= nil then
      found[#found + 1] = { div, key }
      placed[key] = true
    end
  end)
  for key in pairs(annotations) do
    if not placed[key] then
      return nil -- before any change: the document goes to rw-filter as it is
    end
  end
  for _, pair in ipairs(found) do
    annotate_entry(pair[1], annotations[pair[2]])
  end
  return doc
end

local function place(doc, annotations)
  return place_by(doc, annotations, function(div)
    return entry_key(div.identifier:sub(5), annotations)
  end)
end

-- rw-filter's --verdicts answer: each entry Div, by identifier, with the key whose notice it gets.
place_answer = function(doc, answer)
  local annotations, entries = without_nulls(answer.annotations or {}), answer.entries or {}
  return place_by(doc, annotations, function(div)
    return entries[div.identifier]
  end)
end

-- The rendered entries as pandoc JSON (the memo's name covers what they print): "" before
-- citeproc.
local function printed_of(doc)
  return function()
    local entries = {}
    each_entry(doc.blocks, function(div)
      entries[#entries + 1] = div
    end)
    return #entries == 0 and "" or pandoc.write(pandoc.Pandoc(entries), "json")
  end
end

local function replay(doc, memo)
  for _, line in ipairs(memo.lines or {}) do
    io.stderr:write(line, line:sub(-1) == "\n" and "" or "\n")
  end
  if memo.exit_code ~= 0 then
    stop(memo.exit_code, "the integrity gate stopped the build (see the rw-filter lines above)")
  end
  if next(memo.annotations or {}) == nil then
    return doc
  end
  return place(doc, memo.annotations)
end

function Pandoc(doc)
  -- Looked at in a copy: what is read from `doc` itself is kept as Lua values that pandoc rebuilds
  -- it from when it reads it back, and that cost pandoc a major garbage collection (~6 MiB more
  -- heap, tens of ms) on the 200-citation benchmark.
  local probe = doc.clone and doc:clone() or doc -- (Pandoc:clone: pandoc 2.19 and later)
  local own = wants_citeproc(probe) and not rendered(probe.blocks)
  if own then
    doc = citeproc(doc)
  end
  local ids, settled = citations(doc, own)
  local memo = memo_path(probe, ids, own, printed_of(doc))
  local known = remembered(memo)
  return known and replay(settled, known) or judge(doc, settled, memo)
end

return { { Pandoc = Pandoc } }
