"""`python -m bench.plan`: see bench/plan/__init__.py."""

from bench.plan import main

main()
