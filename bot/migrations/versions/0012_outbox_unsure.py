"""an outbox row remembers since when a send of it may have reached the platform

`unsure_since` is set when a sender claims the row (an attempt begins whose fate can be lost
with a kill or a dropped connection) and cleared once the outcome is known. A row claimed again
with it set is looked for on Slack before it is sent again (delivery/deliverer.py).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("unsure_since", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("unsure_since")
