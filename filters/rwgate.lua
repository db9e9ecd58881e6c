-- rwgate's Lua filter for plain pandoc: `pandoc paper.md --lua-filter filters/rwgate.lua -o out.pdf`.
-- The implementation is the Quarto extension's (one file for both); see its header for the contract.
local here = pandoc.path.directory(PANDOC_SCRIPT_FILE)
return dofile(pandoc.path.join({ here, "..", "_extensions", "rwgate", "rwgate.lua" }))
