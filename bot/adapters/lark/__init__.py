"""Feishu/Lark: delivery (phase 1). The sender posts digests as interactive cards through the
outbox; inbound events, commands and card actions come later (docs/lark.md)."""
