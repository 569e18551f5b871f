"""mark as a service: the REST API (``mark serve``), the MCP server (``mark mcp``) and the web review page."""
