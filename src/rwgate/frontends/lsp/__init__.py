"""``rwgate lsp``: retraction diagnostics in the editor (Language Server Protocol, stdio).

A front end like the pandoc filter and the LaTeX hooks: the build's readers, settings and kit,
so the editor and the build never disagree. The protocol (pygls) is the ``lsp`` extra's.
"""
