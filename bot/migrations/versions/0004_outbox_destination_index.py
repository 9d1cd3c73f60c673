"""index outbox by destination: claims look for each destination's oldest unfinished message

Revision ID: 0004
Revises: 0003
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_outbox_destination_status", "outbox", ["destination_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_outbox_destination_status", table_name="outbox")
