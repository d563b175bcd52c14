"""clm-policy as an MCP server the agent calls (``clm-policy mcp``)."""
