"""The MCP client: `Client`, and what you give it to answer the server's requests.

See `mcpkit.client.client` for how it works and the decisions behind it,
`mcpkit.client.handlers` for sampling, elicitation and roots, and
`mcpkit.client.notifications` for the notification callbacks.
"""

from mcpkit.client._targets import HttpOptions
from mcpkit.client.client import Client
from mcpkit.client.handlers import Elicitation, Sampling, form_errors

__all__ = ["Client", "Elicitation", "HttpOptions", "Sampling", "form_errors"]
