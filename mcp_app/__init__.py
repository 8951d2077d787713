"""SF's MCP server: the API's operations as MCP tools, over stdio and streamable HTTP."""
