"""The fan-out benchmarks: Telegram on SQLite beside python-telegram-bot's rate limiter
(telegram.py), Feishu (lark.py), three replicas on PostgreSQL (pg.py), and the store they
share (setup.py). Nothing is imported here: `bench.plan` uses setup.py alone."""
