"""Streamable HTTP (and the 2024-11-05 HTTP+SSE transport): the ASGI server app and the client.

Nothing is imported here eagerly: `mcpkit.transports.http.app` for the server side,
`mcpkit.transports.http.client` for the client side.
"""
