"""`prdigest pr REF [SECTION] [--format ...]`: what `/pr` answers."""

from __future__ import annotations

import argparse

from bot.chat.commands import UsageError, section_of
from bot.cli.common import CliError, Command, print_json_lines
from bot.core.models import Format, Locale, Section
from bot.core.render.labels import notice_text
from bot.core.render.renderer import Renderer
from bot.core.reports.refs import BadRefError, parse_ref
from bot.core.store.lookup import LookupError_, find_report
from bot.service.context import open_context

FORMATS = ("text", "json", "slack", "telegram")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ref", metavar="REF", help="7422, verl#7422, owner/repo#7422 or a report URL"
    )
    parser.add_argument(
        "section",
        nargs="?",
        default=Section.SUMMARY.value,
        metavar="SECTION",
        help=f"one of {', '.join(s.value for s in Section)}, or a word the chat knows "
        "(risk, 风险, why...); default: summary",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", dest="fmt")
    parser.add_argument(
        "--locale",
        choices=[loc.value for loc in Locale],
        help="language of the answer; default: the config's `locale` (zh unless set)",
    )


async def _handle(args: argparse.Namespace) -> int:
    try:
        ref = parse_ref(args.ref)
    except BadRefError as exc:
        raise CliError(str(exc)) from exc
    async with open_context(create=False) as ctx:
        locale = Locale(args.locale) if args.locale else ctx.config.locale
        try:
            section = section_of(args.section)
        except UsageError as exc:
            raise CliError(notice_text(exc.key, locale, exc.params)) from exc
        try:
            item = await find_report(ctx.reports, ref)
        except LookupError_ as exc:
            raise CliError(str(exc)) from exc
    if args.fmt == "json":
        print(item.report.model_dump_json(indent=2))
        return 0
    fmt = Format(args.fmt)
    messages = Renderer().section(item, section, fmt, locale)
    if fmt is Format.TEXT:
        print("\n\n".join(m.text for m in messages))
    else:
        print_json_lines(m.payload for m in messages)
    return 0


COMMAND = Command("pr", "show a stored report, as /pr answers it", _configure, _handle)
