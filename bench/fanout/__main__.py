"""`python -m bench.fanout`: see bench/fanout/telegram.py."""

from bench.fanout.telegram import main

main()
