"""`prdigest` and `python -m bot` are the same program."""

from bot.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
