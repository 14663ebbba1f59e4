"""The MCP client: `Client`, and what you give it to answer the server's requests.

See `mcpkit.client.client` for how it works and the decisions behind it,
`mcpkit.client.handlers` for sampling, elicitation and roots,
`mcpkit.client.notifications` for the notification callbacks, `mcpkit.client.era` for how
the protocol era is chosen (2026-07-28 or the initialize handshake), `mcpkit.client.mrtr` for
input_required rounds and `mcpkit.client.listen` for `client.listen(...)`.
"""

from typing import TYPE_CHECKING, Any

from mcpkit._renamed import renamed
from mcpkit.client._targets import HTTPAuth, HTTPOptions, InProcessServer, Target
from mcpkit.client.client import Client
from mcpkit.client.era import EraMismatch
from mcpkit.client.handlers import Elicitation, Sampling, form_errors
from mcpkit.client.listen import Notification, Subscription
from mcpkit.client.mrtr import InputRequired, InputRequiredError
from mcpkit.client.options import ClientKeywords, ClientOptions
from mcpkit.types.eras import Era

__all__ = [
    "Client",
    "ClientKeywords",
    "ClientOptions",
    "Elicitation",
    "Era",
    "EraMismatch",
    "HTTPAuth",
    "HTTPOptions",
    "InProcessServer",
    "InputRequired",
    "InputRequiredError",
    "Notification",
    "Sampling",
    "Subscription",
    "Target",
    "form_errors",
]

# Old spellings, answered for one release with a DeprecationWarning (issue 23).
_RENAMED = {"HttpOptions": "HTTPOptions"}

# Hidden from type checkers: a typo in `from ... import` stays an error there, and so does
# an old spelling (it works at run time, with its warning).
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        return globals()[renamed(__name__, name, _RENAMED)]
