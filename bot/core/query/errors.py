"""The one error a query can raise: what was wrong and where (1-based), as one line."""

from __future__ import annotations

from collections.abc import Mapping


class QueryError(ValueError):
    """A query that cannot be read. `str(error)` is the line a user sees:
    `query: unknown field 'rsk' at 1 (did you mean risk?)`. `key` and `params` name the same
    error for a chat's language (labels.error_text); `position` is where it is."""

    def __init__(
        self,
        message: str,
        position: int | None = None,
        hint: str = "",
        *,
        key: str = "",
        params: Mapping[str, str] | None = None,
    ) -> None:
        self.message = message
        self.position = position
        self.hint = hint
        self.key = key
        self.params = dict(params or {})
        where = f" at {position}" if position is not None else ""
        tail = f" ({hint})" if hint else ""
        super().__init__(f"query: {message}{where}{tail}")
