"""pace slots: per-platform send pacing shared by every replica (PostgreSQL)

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pace_slots",
        sa.Column("platform", sa.String(16), primary_key=True),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pace_slots")
