"""The base class of every generated protocol model.

Models keep unknown fields (`extra="allow"`) and remember which fields were set, so
`from_wire(data).to_wire() == data` for any valid message. Schemas are built on first use
(`defer_build`), which keeps importing a module of 150 models cheap.
"""

from __future__ import annotations

from typing import Any, Self

import pydantic
from pydantic import ConfigDict

_V2_11 = tuple(int(part) for part in pydantic.VERSION.split(".")[:2]) >= (2, 11)


class MCPModel(pydantic.BaseModel):
    """A protocol message or part of one; attributes are snake_case, the wire is camelCase."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,  # validate_by_name + validate_by_alias, spelled for pydantic < 2.11
        serialize_by_alias=True,  # pydantic >= 2.11; to_wire() passes by_alias in any case
        defer_build=True,
        protected_namespaces=(),
    )

    def model_post_init(self, context: Any, /) -> None:
        # An unknown key spelled like an attribute (`is_error` next to the `isError` field) is
        # kept as an extra, but pydantic also counts it as a set field, and exclude_unset would
        # then write `"isError": null`. Only a field still at its default can be affected.
        extra = self.__pydantic_extra__
        if extra:
            fields = type(self).__pydantic_fields__
            for key in [k for k in extra if k in fields and fields[k].alias not in (None, k)]:
                if getattr(self, key) is None:
                    self.__pydantic_fields_set__.discard(key)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for the wire: aliases, only the fields that were set, extras kept."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        """Validate a decoded JSON object. Raises pydantic.ValidationError when it is invalid.

        Keys are matched by their wire names only, so an unknown key that happens to look like
        an attribute name (`is_error`) is kept as an extra field rather than misread.
        """
        if _V2_11:
            return cls.model_validate(data, by_alias=True, by_name=False)
        return cls.model_validate(data)
