"""Makes the modules named in $MCPKIT_TEST_BLOCK unimportable in this interpreter, as if they
were not installed (a meta path finder asked first refuses them): how tests see what a user
without an extra sees, with the real code paths and no mocks."""

import os
import sys

BLOCKED = {name for name in os.environ.get("MCPKIT_TEST_BLOCK", "").split(",") if name}


class _NotInstalled:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
