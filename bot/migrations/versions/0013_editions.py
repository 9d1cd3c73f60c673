"""editions: what many destinations' digests share is stored once

A tick at 100,000 subscriptions renders a few hundred distinct digests. An edition is one of
them: its messages (`edition_messages`, the payloads) and its entries (`edition_entries`, which
message shows which PR, and the ones kept for "+N more"). A run points at its edition
(`digest_runs.edition_id`); its outbox rows keep no payload of their own (the claim reads the
edition's), and how far its "+N more" pages went is the run's own `paged` count.

Runs planned before this revision keep their outbox payloads; their entries move to an edition
each, numbered like the run, so a "+N more" button they posted (it carries the run id) still
finds its run.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_ENTRY_COLUMNS = "position, seq, repo, number, tag, must_read, kind, part"


def _entry_columns() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("tag", sa.String(128), nullable=False),
        sa.Column("must_read", sa.Boolean, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("part", sa.Integer, nullable=True),
    ]


def upgrade() -> None:

    def edition() -> sa.ForeignKey:
        return sa.ForeignKey("editions.id", ondelete="CASCADE")

    op.create_table(
        "editions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "edition_messages",
        sa.Column("edition_id", sa.Integer, edition(), primary_key=True),
        sa.Column("part", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("reply_to_part", sa.Integer, nullable=True),
        sa.Column("topic", sa.String(128), nullable=True),
    )
    op.create_table(
        "edition_entries",
        sa.Column("edition_id", sa.Integer, edition(), nullable=False),
        *_entry_columns(),
        sa.UniqueConstraint("edition_id", "position", name="uq_edition_entries_position"),
    )
    # Plain columns (SQLite cannot add a constraint to a table others reference without
    # rebuilding it): the retention deletes an edition only once no run points at it.
    op.add_column("digest_runs", sa.Column("edition_id", sa.Integer, nullable=True))
    op.add_column(
        "digest_runs", sa.Column("paged", sa.Integer, nullable=False, server_default="0")
    )
    op.create_index("ix_digest_runs_edition", "digest_runs", ["edition_id"])
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("payload", existing_type=sa.JSON, nullable=True)
    _move_entries()
    op.drop_index("ix_run_entries_pr", "run_entries")
    op.drop_table("run_entries")


def _move_entries() -> None:
    """Each run that recorded entries gets the edition of the same number."""
    op.execute(
        "INSERT INTO editions (id, created_at) SELECT id, created_at FROM digest_runs"
        " WHERE id IN (SELECT run_id FROM run_entries)"
    )
    op.execute(
        f"INSERT INTO edition_entries (edition_id, {_ENTRY_COLUMNS})"
        f" SELECT run_id, {_ENTRY_COLUMNS} FROM run_entries"
    )
    op.execute(
        "UPDATE digest_runs SET edition_id = id, paged = (SELECT count(*) FROM run_entries e"
        " WHERE e.run_id = digest_runs.id AND e.kind = 'more' AND e.paged_at IS NOT NULL)"
        " WHERE id IN (SELECT id FROM editions)"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('editions', 'id'),"
            " (SELECT coalesce(max(id), 0) + 1 FROM editions), false)"
        )


def downgrade() -> None:
    """Entries and payloads go back to each run (how far "+N more" paged is forgotten)."""
    op.create_table(
        "run_entries",
        sa.Column(
            "run_id", sa.Integer, sa.ForeignKey("digest_runs.id", ondelete="CASCADE"), nullable=False
        ),
        *_entry_columns(),
        sa.Column("paged_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("run_id", "position", name="uq_run_entries_run_position"),
    )
    op.create_index("ix_run_entries_pr", "run_entries", ["repo", "number"])
    op.execute(
        f"INSERT INTO run_entries (run_id, {_ENTRY_COLUMNS})"
        f" SELECT r.id, {', '.join('e.' + c for c in _ENTRY_COLUMNS.split(', '))}"
        " FROM digest_runs r JOIN edition_entries e ON e.edition_id = r.edition_id"
    )
    op.execute(
        "UPDATE outbox SET payload = (SELECT m.payload FROM edition_messages m"
        " JOIN digest_runs r ON r.edition_id = m.edition_id"
        " WHERE r.id = outbox.run_id AND m.part = outbox.part) WHERE payload IS NULL"
    )
    with op.batch_alter_table("outbox") as batch:
        batch.alter_column("payload", existing_type=sa.JSON, nullable=False)
    op.drop_index("ix_digest_runs_edition", "digest_runs")
    op.drop_column("digest_runs", "paged")
    op.drop_column("digest_runs", "edition_id")
    op.drop_table("edition_entries")
    op.drop_table("edition_messages")
    op.drop_table("editions")
