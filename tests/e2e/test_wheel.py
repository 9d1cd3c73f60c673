"""`pip install .` gives a prdigest that works anywhere (issue 15): the wheel carries the repo's
top-level `templates/` (as `bot/templates/`) and finds it at run time.

The slow test builds the wheel from a copy of the checkout, installs it with `--no-deps` into a
fresh venv, makes the dependencies visible through a `.pth` line naming this venv's
site-packages (a plain path line: the editable install's own `.pth` finder there is never run,
so the checkout's `bot` stays out of sight), and runs `ingest`, `pr` and `digest --dry-run` from
a temporary directory. No network: the build uses this venv's setuptools (dev extra).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from tests.kits.paths import ROOT, SAMPLES

# What a checkout holds that a build must not see (or copy for nothing).
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", "data", "tmp", ".*cache",
    ".hypothesis", "bench", "tests", "docs", "deploy",
)  # fmt: skip
COMMAND_TIMEOUT = 120  # seconds; a cold start of a fresh venv on a loaded machine


def _packages_config() -> list[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return list(tomllib.load(file)["tool"]["setuptools"]["packages"])


def test_wheel_lists_every_package_under_bot() -> None:
    """The packages are listed, not found (to map `templates/` in): a new one must be listed."""
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "bot").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    listed = set(_packages_config())
    assert found - listed == set(), "add to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == {"bot.templates"}


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    wheels = tmp_path / "wheels"
    build = ["wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet"]
    _run([sys.executable, "-m", "pip", *build, "-w", str(wheels), str(source)], cwd=tmp_path)
    (wheel,) = wheels.glob("prdigest-*.whl")
    return wheel


def _fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    install = ["install", "--quiet", "--no-deps", "--no-index", str(wheel)]
    _run([sys.executable, "-m", "pip", "--python", str(python), *install], cwd=tmp_path)
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    ours = sysconfig.get_paths()
    deps = dict.fromkeys([ours["purelib"], ours["platlib"]])  # this venv's dependencies
    (Path(purelib.strip()) / "zz_prdigest_deps.pth").write_text("\n".join(deps) + "\n")
    return venv


def _run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{args[0]} {args[1:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_installed_wheel_runs_outside_the_checkout(tmp_path: Path) -> None:
    venv = _fresh_venv(tmp_path, _build_wheel(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TELEGRAM_"))}
    env["PYTHONPATH"] = str(ROOT / "tests" / "netguard")  # the network guard, not the checkout
    env["BOT_DATABASE_URL"] = f"sqlite:///{tmp_path / 'bot.db'}"
    env["BOT_CONFIG"] = ""
    env.pop("BOT_INGEST_TOKEN", None)

    where = _run(
        [str(venv / "bin" / "python"), "-c", "import bot; print(bot.__file__)"], elsewhere, env
    )
    assert Path(where.strip()).is_relative_to(venv), where
    prdigest = str(venv / "bin" / "prdigest")

    ingested = _run([prdigest, "ingest", str(SAMPLES / "verl-7422.md")], elsewhere, env)
    assert "1 new, 0 updated, 0 unchanged, 0 failed" in ingested
    answer = _run([prdigest, "pr", "7422"], elsewhere, env)
    assert "#7422" in answer
    preview = _run([prdigest, "digest", "console", "--dry-run"], elsewhere, env)
    assert "#7422" in preview
    assert not (elsewhere / "data").exists()  # the database is where BOT_DATABASE_URL says
