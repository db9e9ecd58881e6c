"""`rwgate mcp`: the integrity checks as MCP tools (the SDK is imported only by server.py)."""
