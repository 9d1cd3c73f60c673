"""The one error a query can raise: what was wrong and where (1-based), as one line."""

from __future__ import annotations


class QueryError(ValueError):
    """A query that cannot be read. `str(error)` is the line a user sees:
    `query: unknown field 'rsk' at 1 (did you mean risk?)`."""

    def __init__(self, message: str, position: int | None = None, hint: str = "") -> None:
        self.message = message
        self.position = position
        self.hint = hint
        where = f" at {position}" if position is not None else ""
        tail = f" ({hint})" if hint else ""
        super().__init__(f"query: {message}{where}{tail}")
