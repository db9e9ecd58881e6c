"""The front ends: the command line, pandoc, LaTeX, MCP, the editor, screen and verify."""
