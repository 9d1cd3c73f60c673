"""The schema, as SQLAlchemy Core tables. Migrations in `bot/migrations/` create the same.

Times are stored as timezone-aware UTC. JSON columns hold pydantic dumps or lists.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.engine import Dialect


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on every backend (SQLite hands back naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

counters = Table(
    "counters",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

reports = Table(
    "reports",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("seq", BigInteger, nullable=False, unique=True),
    Column("revision", Integer, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("data", JSON, nullable=False),
    Column("tags", Text, nullable=False, default=""),
    Column("source", Text, nullable=False, default=""),
    Column("merged_at", UtcDateTime(), nullable=True),
    Column("ingested_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    UniqueConstraint("repo", "number", name="uq_reports_repo_number"),
)
Index("ix_reports_number", reports.c.number)

# What the query language's field terms read, one row per report, written with the full-text
# index (store/search/facets.py): lists are wrapped in FACET_SEP (`\x1fa\x1fb\x1f`), text is
# normalized (query/text.py), levels are their rank (low 0 … high 2), `at` is merged_at, else
# when the store first saw the report.
report_facets = Table(
    "report_facets",
    metadata,
    Column(
        "report_id",
        Integer,
        ForeignKey("reports.id", ondelete="CASCADE"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("seq", BigInteger, nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("number", Integer, nullable=False),
    Column("repo", String(200), nullable=False),
    Column("impact", SmallInteger, nullable=True),
    Column("rec", SmallInteger, nullable=True),
    Column("tags", Text, nullable=False),
    Column("risks", Text, nullable=False),
    Column("files", Text, nullable=False),
    Column("names", Text, nullable=False),
    Column("symbols", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    # What ranking reads besides the title and the one-liner (search/relevance.py): the
    # recommendation, and the rest of the searched text joined by SEP (migration 0019).
    Column("recommendation", Text, nullable=False, default=""),
    Column("details", Text, nullable=False, default=""),
)
Index("ix_report_facets_at", report_facets.c.at, report_facets.c.seq)
Index("ix_report_facets_seq", report_facets.c.seq, unique=True)  # the text index's key
Index("ix_report_facets_number", report_facets.c.number)

# A place digests go to: a Slack channel or DM, a Telegram chat, a console. It holds any number
# of subscriptions; sending (order, pacing, Retry-After, deactivation) is per destination.
destinations = Table(
    "destinations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("platform", String(16), nullable=False),
    Column("target", String(128), nullable=False),
    Column("active", Boolean, nullable=False, default=True),
    Column("deactivated_reason", Text, nullable=True),
    Column("consecutive_failures", Integer, nullable=False, default=0),
    Column("next_send_at", UtcDateTime(), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    # Telegram forum supergroups: None until a topic is first opened there (True), or the
    # platform said the chat is not a forum (False, at forum_checked_at: topics layouts post
    # flat here, and ask again a day later in case topics were turned on).
    Column("forum", Boolean, nullable=True),
    Column("forum_checked_at", UtcDateTime(), nullable=True),
    # The "not a forum, posting flat" notice, rendered by the planner; queued once, when
    # (forum_told_at) the chat is first found not to be a forum.
    Column("layout_notice", JSON, nullable=True),
    Column("forum_told_at", UtcDateTime(), nullable=True),
    # A digest that failed to plan or render here (a bug its data provokes) leaves the others
    # alone: how many tries in a row failed, the last error, when to try again (backing off),
    # and when the chat was told (once a streak). See bot/core/delivery/plan_failures.py.
    Column("plan_failures", Integer, nullable=False, default=0, server_default="0"),
    Column("plan_error", Text, nullable=True),
    Column("plan_retry_at", UtcDateTime(), nullable=True),
    Column("plan_told_at", UtcDateTime(), nullable=True),
    UniqueConstraint("platform", "target", name="uq_destinations_platform_target"),
)

# What a destination reads and when: a query (`filters` holds it, with a config channel's
# tags/repos), a cadence (`schedule`: a cron, or "now"; `cadence`: as written), a layout, a
# locale, an owner (None: the chat; a user id: that person's, in a DM or private chat), and its
# own watermark. `number` is what the chat calls it (`unsubscribe 2`); `name` is unique in
# the destination.
TITLE_MAX = 80  # a destination's title (config `title:`), in characters

subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("destination_id", Integer, ForeignKey("destinations.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("name", String(128), nullable=False),
    Column("origin", String(16), nullable=False),  # Origin: "config" or "chat"
    Column("filters", JSON, nullable=False),
    Column("schedule", String(128), nullable=False),
    Column("cadence", String(128), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("locale", String(8), nullable=False),
    Column("layout", String(16), nullable=False, default="flat"),
    Column("verbosity", String(16), nullable=False, default="standard"),
    Column("owner", String(128), nullable=True),
    Column("post_empty", Boolean, nullable=False, default=False),
    Column("locked", Boolean, nullable=False, default=False),
    Column("watermark", BigInteger, nullable=False, default=0),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    # Its own switches over the destination's calendar (migration 0017): `urgent` is not held
    # by quiet time, and `holidays` false is not held by the holiday calendar.
    Column("urgent", Boolean, nullable=False, default=False, server_default=false()),
    Column("holidays", Boolean, nullable=False, default=True, server_default=true()),
    # What its digest's header calls the destination (config `title:`, migration 0018).
    Column("title", String(TITLE_MAX), nullable=True),
    UniqueConstraint("destination_id", "number", name="uq_subscriptions_dest_number"),
    UniqueConstraint("destination_id", "name", name="uq_subscriptions_dest_name"),
)

# One digest per destination and fire time; the subscriptions it serves are its run_members.
digest_runs = Table(
    "digest_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("destination_id", Integer, ForeignKey("destinations.id"), nullable=False),
    Column("scheduled_for", UtcDateTime(), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("from_seq", BigInteger, nullable=False),
    Column("to_seq", BigInteger, nullable=False),
    Column("entries", Integer, nullable=False),
    Column("messages", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # RunStatus: pending, delivered, partial, empty
    Column("finished_at", UtcDateTime(), nullable=True),
    # The rendered digest it sends (editions.id, shared with the runs of the same audience;
    # no constraint: the retention drops an edition once no run points at it), and how many of
    # that edition's "+N more" entries this run's pages posted.
    Column("edition_id", Integer, nullable=True),
    Column("paged", Integer, nullable=False, default=0, server_default="0"),
    UniqueConstraint("destination_id", "scheduled_for", name="uq_digest_runs_dest_time"),
)
Index("ix_digest_runs_edition", digest_runs.c.edition_id)

# A subscription's part in a run: unique on (subscription, its own fire time), so a fire is
# planned once across replicas; `to_seq` is where its watermark goes when the run is done.
run_members = Table(
    "run_members",
    metadata,
    # Plain: the run is written in the same transaction, and the retention deletes its members
    # with it (a foreign key is a check per row, a second of a 100,000-destination tick: 0014).
    Column("run_id", Integer, nullable=False),
    Column(
        "subscription_id",
        Integer,
        ForeignKey("subscriptions.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("scheduled_for", UtcDateTime(), nullable=False),
    Column("from_seq", BigInteger, nullable=False),
    Column("to_seq", BigInteger, nullable=False),
    UniqueConstraint("subscription_id", "scheduled_for", name="uq_run_members_sub_time"),
)
Index("ix_run_members_run", run_members.c.run_id)

# A PR a `now` subscription posted to a destination: later digests there refer to the post.
instant_posts = Table(
    "instant_posts",
    metadata,
    Column("destination_id", Integer, ForeignKey("destinations.id"), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("run_id", Integer, ForeignKey("digest_runs.id", ondelete="CASCADE"), nullable=False),
    Column("posted_at", UtcDateTime(), nullable=False),
)

# What the digests of many destinations share, stored once (an edition): its messages, its
# shown entries in digest order (`edition_entries`: `new`, shown in message `part`, or `unread`,
# carried over from an earlier digest there), and the entries past max_items that "+N more"
# pages post: `more_count` of them in `more`, a JSON list of [seq, repo, number, tag,
# must_read] in page order (one value, not a row each: a digest over 500 new reports keeps
# hundreds). A run points at its edition; how many of `more` its pages posted is its `paged`.
editions = Table(
    "editions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("more_count", Integer, nullable=False, server_default="0"),
    Column("more", JSON(none_as_null=True), nullable=True),
)

edition_messages = Table(
    "edition_messages",
    metadata,
    Column("edition_id", Integer, ForeignKey("editions.id", ondelete="CASCADE"), primary_key=True),
    Column("part", Integer, primary_key=True, autoincrement=False),
    Column("payload", JSON, nullable=False),
    Column("reply_to_part", Integer, nullable=True),  # as outbox.reply_to_part
    Column("topic", String(128), nullable=True),  # as outbox.topic
)

edition_entries = Table(
    "edition_entries",
    metadata,
    Column("edition_id", Integer, ForeignKey("editions.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("tag", String(128), nullable=False),
    Column("must_read", Boolean, nullable=False),
    Column("kind", String(8), nullable=False),  # new | unread
    Column("part", Integer, nullable=True),
    UniqueConstraint("edition_id", "position", name="uq_edition_entries_position"),
)

# A destination's reading state: a PR read (by whom, when), a PR snoozed or a tag muted until a
# time. `subject` is the PR ("owner/repo#7422") or the tag; one row per (destination, kind,
# subject), the latest press wins.
reading_marks = Table(
    "reading_marks",
    metadata,
    Column("destination_id", Integer, ForeignKey("destinations.id"), primary_key=True),
    Column("kind", String(8), primary_key=True),  # read | snooze | mute
    Column("subject", String(256), primary_key=True),
    Column("actor", String(128), nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("until", UtcDateTime(), nullable=True),  # None: for good (read)
)

# Who changed a destination's subscriptions from the chat, when, and what.
subscription_changes = Table(
    "subscription_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("destination_id", Integer, ForeignKey("destinations.id"), nullable=False),
    Column("actor", String(128), nullable=False),
    Column("action", String(16), nullable=False),  # subscribe | unsubscribe | import
    Column("detail", Text, nullable=False),
    Column("at", UtcDateTime(), nullable=False),
)
Index("ix_subscription_changes_at", subscription_changes.c.at)

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # Plain columns (migration 0014): the planner writes them under the destination's lock in
    # the run's own transaction; destinations are never deleted, and the retention deletes a
    # run's rows before the run.
    Column("run_id", Integer, nullable=True),
    Column("destination_id", Integer, nullable=False),
    Column("part", Integer, nullable=False),
    # NULL: the message is its run's edition's (edition_messages, same part).
    Column("payload", JSON(none_as_null=True), nullable=True),
    Column("status", String(16), nullable=False),  # RowStatus: pending, sending, sent, failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", UtcDateTime(), nullable=False),
    Column("lease_until", UtcDateTime(), nullable=True),
    Column("claimed_by", String(64), nullable=True),
    Column("last_error", Text, nullable=True),
    Column("external_id", String(128), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("sent_at", UtcDateTime(), nullable=True),
    # When the earliest attempt whose outcome is unknown began (set at claim, cleared once the
    # outcome is known): a row claimed again with it set may already be on the platform.
    Column("unsure_since", UtcDateTime(), nullable=True),
    # Threaded layouts: the part (same run) whose message this one replies to.
    Column("reply_to_part", Integer, nullable=True),
    # Topics layouts: the forum topic's key (forum_topics.key) this message goes to.
    Column("topic", String(128), nullable=True),
    UniqueConstraint("run_id", "part", name="uq_outbox_run_part"),
)
Index("ix_outbox_due", outbox.c.status, outbox.c.next_attempt_at, outbox.c.id)
Index("ix_outbox_destination_status", outbox.c.destination_id, outbox.c.status)

# A destination's forum topics (Telegram), one per key (a tag): the row is written by the
# planner (name, no thread yet) and the thread id by the sender that opened the topic.
forum_topics = Table(
    "forum_topics",
    metadata,
    Column("destination_id", Integer, ForeignKey("destinations.id"), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("name", String(128), nullable=False),
    Column("thread_id", String(32), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("opened_at", UtcDateTime(), nullable=True),
)

processed_events = Table(
    "processed_events",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("created_at", UtcDateTime(), nullable=False),
)

source_state = Table(
    "source_state",
    metadata,
    Column("key", Text, primary_key=True),
    Column("etag", Text, nullable=True),
    Column("last_modified", Text, nullable=True),
    Column("content_hash", String(64), nullable=True),
    Column("last_error", Text, nullable=True),
    Column("updated_at", UtcDateTime(), nullable=False),
)

pace_slots = Table(
    "pace_slots",
    metadata,
    Column("platform", String(16), primary_key=True),
    Column("next_at", UtcDateTime(), nullable=False),
)

leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("expires_at", UtcDateTime(), nullable=False),
)
