"""``rwgate lsp``: retraction diagnostics in the editor, with the build's readers, settings and
kit, so the editor and the build never disagree. The protocol (pygls) is the ``lsp`` extra's."""
