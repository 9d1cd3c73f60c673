"""What answering a Feishu message or a card press needs, given once to each."""

from __future__ import annotations

from bot.adapters.base import AdapterDeps
from bot.adapters.lark.members import LarkMembers
from bot.adapters.lark.replier import LarkReplier
from bot.adapters.work import WorkQueue
from bot.chat.service import ChatService


class LarkHandler:
    """The chat layer, the renderer, who is who in a chat, the replies and the work queue."""

    def __init__(
        self, deps: AdapterDeps, members: LarkMembers, replier: LarkReplier, work: WorkQueue
    ) -> None:
        self.service: ChatService = deps.chat
        self.renderer = deps.renderer
        self.members = members
        self.replier = replier
        self.work = work
