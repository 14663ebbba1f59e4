"""The CLI's exit codes (the `mcpkit --help` text lists them)."""

EXIT_TOOL_ERROR = 1  # the tool reported an error
EXIT_USAGE = 2  # the command line or its target is wrong
EXIT_CONNECTION = 3  # could not connect, closed, timed out
EXIT_PROTOCOL = 4  # the server answered with a protocol error
