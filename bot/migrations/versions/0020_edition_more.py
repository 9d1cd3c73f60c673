"""an edition keeps its "+N more" entries as one list, not a row each

A digest with 500 new reports and a cap of 20 kept 480 `more` rows in edition_entries, written
by every tick and read only by the pages "+N more" posts. They move to the edition's own row:
`more_count` (what the button counts, what a page is measured against) and `more`, a JSON list
of [seq, repo, number, tag, must_read] in the order the pages post them. edition_entries keeps
the shown entries (`new`, `unread`), which reading marks and reactions look up by PR.

Revision ID: 0020
Revises: 0019
"""

from itertools import groupby
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

MORE_KIND = "more"  # edition_entries.kind of an entry behind "+N more" (a frozen copy)


def upgrade() -> None:
    op.add_column(
        "editions", sa.Column("more_count", sa.Integer, nullable=False, server_default="0")
    )
    op.add_column("editions", sa.Column("more", sa.JSON, nullable=True))
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT edition_id, seq, repo, number, tag, must_read FROM edition_entries"
            " WHERE kind = :kind ORDER BY edition_id, position"
        ),
        {"kind": MORE_KIND},
    ).all()
    lists = [
        {"id": edition, "count": len(entries), "more": entries}
        for edition, entries in (
            (edition, [[r.seq, r.repo, r.number, r.tag, bool(r.must_read)] for r in group])
            for edition, group in groupby(rows, key=lambda r: r.edition_id)
        )
    ]
    if lists:
        bind.execute(
            sa.text("UPDATE editions SET more_count = :count, more = :more WHERE id = :id")
            .bindparams(sa.bindparam("more", type_=sa.JSON)),
            lists,
        )  # fmt: skip
    bind.execute(sa.text("DELETE FROM edition_entries WHERE kind = :kind"), {"kind": MORE_KIND})


def downgrade() -> None:
    """The lists go back to rows, after each edition's shown entries."""
    bind = op.get_bind()
    editions = bind.execute(
        sa.text(
            "SELECT e.id, e.more, (SELECT coalesce(max(n.position), -1) FROM edition_entries n"
            " WHERE n.edition_id = e.id) AS last FROM editions e WHERE e.more_count > 0"
        ).columns(sa.column("id", sa.Integer), sa.column("more", sa.JSON), sa.column("last"))
    ).all()
    rows: list[dict[str, Any]] = [
        {"edition_id": e.id, "position": e.last + 1 + i, "seq": seq, "repo": repo,
         "number": number, "tag": tag, "must_read": must, "kind": MORE_KIND}
        for e in editions
        for i, (seq, repo, number, tag, must) in enumerate(e.more or [])
    ]  # fmt: skip
    if rows:
        bind.execute(
            sa.text(
                "INSERT INTO edition_entries (edition_id, position, seq, repo, number, tag,"
                " must_read, kind, part) VALUES (:edition_id, :position, :seq, :repo, :number,"
                " :tag, :must_read, :kind, NULL)"
            ),
            rows,
        )
    op.execute("ALTER TABLE editions DROP COLUMN more")  # SQLite 3.35+ drops in place
    op.execute("ALTER TABLE editions DROP COLUMN more_count")
