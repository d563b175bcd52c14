"""clm-policy as an MCP server the agent calls (``clm-policy mcp``): finding the calling
session (:mod:`.calling`), what each tool does (:mod:`.tools`, no MCP SDK), the server that
registers them (:mod:`.server`, the optional ``mcp`` package) and installing it for Claude
Code (:mod:`.install`)."""
