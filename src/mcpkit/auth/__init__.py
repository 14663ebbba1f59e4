"""OAuth 2.1 for MCP: the protected-resource side, an authorization server, and the client.

Optional (`pip install 'mcpkit[auth]'`): nothing here is imported by `import mcpkit`, and the
JOSE library (PyJWT) is imported only where a token is signed or verified.

- `mcpkit.auth.pkce`, `mcpkit.auth.wellknown`: small pure helpers both sides share.
- `mcpkit.auth.server`: our own OAuth 2.1 authorization server (docs/authorization-server.md).
"""
