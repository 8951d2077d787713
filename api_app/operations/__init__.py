"""What a token may do, written once for every machine interface.

The API's routes (``api_app.routes``) and the MCP server's tools (``mcp_app``) both
call these functions: each takes the caller's ``ApiToken`` and plain values, finds the
objects the token may see (``visible_or_404``: anything else is *not found*), asks
``agents_app.access`` whether the person's role allows the action, calls the one
service the web calls too, and answers with the API's pydantic schemas. Errors are
``ApiProblem`` or ``SfError``, which ``api_app.problems.problem_of`` turns into the
same stable codes on both interfaces.
"""
