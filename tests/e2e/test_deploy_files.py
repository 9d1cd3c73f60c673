"""The deploy files (Dockerfile, compose, systemd, Kubernetes, docs) agree with the program.

Ports, probe paths, environment names, the config path, CLI subcommands and shutdown budgets are
read from the deploy files and checked against the code that serves them. Docker is not needed:
the files are parsed as text/YAML and the health-check one-liners run against a loopback stub.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import tomllib
import typing
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import pytest
import yaml
from pydantic import SecretStr
from sqlalchemy.engine import make_url

import bot.service.server
from bot.cli import COMMANDS, build_parser, run_cmd
from bot.cli.config_cmd import problems
from bot.core.store.reports import ReportStore
from bot.settings import DEFAULT_CONFIG_PATH, BotConfig, Env, load_config
from bot.settings.env_checks import is_placeholder
from bot.web.metrics import Metrics
from bot.web.routes import WebDeps, build_web
from tests.kits.paths import ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
ENV_PREFIXES = ("BOT_", "SLACK_", "TELEGRAM_")
ENV_LINE = re.compile(r"^\s*(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$")


# ---- readers -------------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the final stage, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    instructions = [
        tuple(line.strip().split(None, 1)) for line in joined.splitlines() if line.strip()
    ]
    last_from = max(i for i, ins in enumerate(instructions) if ins[0].upper() == "FROM")
    return [(ins[0].upper(), ins[1]) for ins in instructions[last_from:]]


def docker_args(keyword: str) -> list[str]:
    return [args for key, args in dockerfile() if key == keyword]


def docker_env() -> dict[str, str]:
    pairs = [word.split("=", 1) for args in docker_args("ENV") for word in shlex.split(args)]
    return {name: value for name, value in pairs}


def workdir() -> PurePosixPath:
    (path,) = docker_args("WORKDIR")
    return PurePosixPath(path)


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def k8s(kind: str) -> dict[str, Any]:
    found = [
        doc
        for path in sorted(K8S.glob("*.yaml"))
        for doc in documents(path)
        if doc.get("kind") == kind
    ]
    assert len(found) == 1, f"expected one {kind} in deploy/k8s, found {len(found)}"
    return found[0]


def pod_spec(kind: str) -> dict[str, Any]:
    spec = k8s(kind)["spec"]
    template = spec["jobTemplate"]["spec"]["template"] if kind == "CronJob" else spec["template"]
    return dict(template["spec"])


def only_container(kind: str) -> dict[str, Any]:
    (container,) = pod_spec(kind)["containers"]
    return dict(container)


def compose() -> dict[str, Any]:
    (doc,) = documents(DEPLOY / "compose.yaml")
    return doc


def bot_services() -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in compose()["services"].items() if "build" in svc}


def compose_environment(service: dict[str, Any]) -> dict[str, str]:
    """The service's `environment:` with `${VAR:-default}` replaced by its default."""
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(v)) for k, v in env.items()}


def env_file(path: Path) -> tuple[dict[str, str], set[str]]:
    """(active NAME=value lines, every name shown, commented out or not)."""
    active: dict[str, str] = {}
    shown: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := ENV_LINE.match(line):
            shown.add(match[2])
            if not match[1]:
                active[match[2]] = match[3]
    return active, shown


def systemd_unit() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    text = (DEPLOY / "systemd" / "prdigest.service").read_text(encoding="utf-8")
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def program_env_names() -> set[str]:
    """Every variable the program reads: Env.from_environ, plus `run`'s BOT_LOG_LEVEL."""
    names = set(re.findall(r'get\("([A-Z][A-Z0-9_]*)"\)', inspect.getsource(Env.from_environ)))
    run_source = inspect.getsource(run_cmd)
    names |= set(re.findall(r'environ\.get\("([A-Z][A-Z0-9_]*)"', run_source))
    assert {"BOT_CONFIG", "BOT_DATABASE_URL", "BOT_LOG_LEVEL"} <= names, "source reading broke"
    return names


def program_secret_names() -> set[str]:
    """The variables whose Env field is a SecretStr."""
    source = inspect.getsource(Env.from_environ)
    field_to_env = dict(re.findall(r'"(\w+)": \("([A-Z][A-Z0-9_]*)", get\(', source))
    secrets = {
        env_name
        for field, env_name in field_to_env.items()
        if SecretStr in typing.get_args(Env.model_fields[field].annotation)
    }
    assert "SLACK_BOT_TOKEN" in secrets, "source reading broke"
    return secrets


def configmap_config() -> BotConfig:
    data = yaml.safe_load(k8s("ConfigMap")["data"]["bot.yaml"])
    return BotConfig.model_validate(data)


def k8s_environ(kind: str) -> dict[str, str]:
    """What the pod's process sees: the example Secret (envFrom) plus the container's env."""
    environ = dict(k8s("Secret")["stringData"])
    environ.update({item["name"]: item["value"] for item in only_container(kind).get("env", [])})
    return environ


def graceful_shutdown_seconds() -> int:
    source = inspect.getsource(bot.service.server.server_config)
    assert "timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS" in source, (
        "bot.service.server.server_config no longer sets timeout_graceful_shutdown"
    )
    return bot.service.server.GRACEFUL_SHUTDOWN_SECONDS


def healthcheck_command(source: str) -> list[str]:
    """The health check's exec form, with `python` replaced by this interpreter."""
    if source == "Dockerfile":
        (args,) = docker_args("HEALTHCHECK")
        command = json.loads(args.split("CMD", 1)[1])
    else:
        command = bot_services()["replica-1"]["healthcheck"]["test"][1:]
    return [sys.executable if word == "python" else word for word in command]


def healthcheck_path(source: str) -> str:
    (path,) = re.findall(r"'(/[\w/-]+)'", healthcheck_command(source)[-1])
    return str(path)


# ---- the HTTP side -------------------------------------------------------------------------


def probe_paths() -> dict[str, str]:
    deployment = only_container("Deployment")
    return {
        "Dockerfile HEALTHCHECK": healthcheck_path("Dockerfile"),
        "compose healthcheck": healthcheck_path("compose"),
        **{f"k8s {probe}": deployment[probe]["httpGet"]["path"] for probe in PROBES},
    }


PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


def test_liveness_checks_healthz_and_readiness_checks_readyz() -> None:
    deployment = only_container("Deployment")
    assert deployment["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert deployment["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert healthcheck_path("Dockerfile") == "/healthz"
    assert healthcheck_path("compose") == "/readyz"


async def test_every_probe_path_is_a_route_that_answers_200_when_healthy(
    store: ReportStore,
) -> None:
    deps = WebDeps(
        store=store, metrics=Metrics(), rules=(), ingest_token=None, is_ready=lambda: True
    )
    app = build_web(deps)
    routes = {getattr(route, "path", None) for route in app.routes}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
        for where, path in probe_paths().items():
            assert path in routes, f"{where} checks {path}, which build_web does not serve"
            assert (await http.get(path)).status_code == 200, where


class _StubServer(ThreadingHTTPServer):
    status = 200
    paths: list[str]


class _StubHandler(BaseHTTPRequestHandler):
    server: _StubServer

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        self.send_response(self.server.status)
        self.end_headers()
        self.wfile.write(b"stub")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def stub_server() -> Iterator[_StubServer]:
    server = _StubServer(("127.0.0.1", 0), _StubHandler)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("source", "path"), [("Dockerfile", "/healthz"), ("compose", "/readyz")])
def test_the_healthcheck_one_liner_passes_on_200_and_fails_on_503(
    stub_server: _StubServer, source: str, path: str
) -> None:
    env = {**os.environ, "BOT_HTTP_PORT": str(stub_server.server_address[1])}
    command = healthcheck_command(source)
    healthy = subprocess.run(command, env=env, capture_output=True, timeout=30, check=False)
    assert healthy.returncode == 0, healthy.stderr.decode()
    stub_server.status = 503
    failing = subprocess.run(command, env=env, capture_output=True, timeout=30, check=False)
    assert failing.returncode != 0
    assert stub_server.paths == [path, path]


def test_every_place_agrees_on_the_port() -> None:
    port = int(docker_env()["BOT_HTTP_PORT"])
    assert docker_args("EXPOSE") == [str(port)]
    container = only_container("Deployment")
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named["http"] == port
    assert int(k8s_environ("Deployment")["BOT_HTTP_PORT"]) == port
    assert {container[probe]["httpGet"]["port"] for probe in PROBES} == {"http"}
    (service_port,) = k8s("Service")["spec"]["ports"]
    assert (service_port["port"], named[service_port["targetPort"]]) == (80, port)
    for name, service in bot_services().items():
        targets = {mapping.rsplit(":", 1)[1] for mapping in service["ports"]}
        assert targets == {str(port)}, name


def test_containers_listen_on_all_interfaces() -> None:
    assert docker_env()["BOT_HTTP_HOST"] == "0.0.0.0"
    assert k8s_environ("Deployment")["BOT_HTTP_HOST"] == "0.0.0.0"


# ---- environment ---------------------------------------------------------------------------


def deploy_env_names() -> dict[str, set[str]]:
    unit_env = [value.split("=", 1)[0] for value in systemd_unit().get("Environment", [])]
    return {
        "bot.env.example": env_file(DEPLOY / "bot.env.example")[1],
        "Secret": set(k8s("Secret")["stringData"]),
        "Deployment": {item["name"] for item in only_container("Deployment").get("env", [])},
        "CronJob": {item["name"] for item in only_container("CronJob").get("env", [])},
        "compose": {n for svc in bot_services().values() for n in compose_environment(svc)},
        "systemd": set(unit_env),
        "Dockerfile": {n for n in docker_env() if n.startswith(ENV_PREFIXES)},
    }


def test_every_env_name_in_the_deploy_files_is_read_by_the_program() -> None:
    known = program_env_names()
    for where, names in deploy_env_names().items():
        assert names <= known, f"{where} sets variables prdigest never reads: {names - known}"


def test_every_variable_is_listed_in_the_env_example_and_every_secret_in_the_secret() -> None:
    listed = env_file(DEPLOY / "bot.env.example")[1]
    assert program_env_names() <= listed
    secret_keys = set(k8s("Secret")["stringData"])
    assert program_secret_names() | {"BOT_DATABASE_URL"} <= secret_keys


def test_the_env_example_does_not_override_what_the_image_sets() -> None:
    active = env_file(DEPLOY / "bot.env.example")[0]
    assert not set(active) & set(docker_env()), "an env_file value would replace the image's"
    assert all(value.strip() for value in active.values()), "an empty value only means unset"


# What a user puts in place of the examples' placeholders (real-looking, not real).
FILLED = {
    "BOT_DATABASE_URL": "postgresql+psycopg://prdigest:9f8e7d6c5b4a@postgres:5432/prdigest",
    "BOT_INGEST_TOKEN": "5f0c1a2b3c4d5e6f5f0c1a2b3c4d5e6f",
    "SLACK_BOT_TOKEN": "xoxb-1234-5678-abcdefABCDEF",
    "SLACK_SIGNING_SECRET": "8f742231b10e8888abcd99yyyzzz85a5",
    "SLACK_APP_TOKEN": "xapp-1-A0123-4567-abcdef",
    "TELEGRAM_BOT_TOKEN": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "TELEGRAM_WEBHOOK_SECRET": "0123456789abcdef_-",
}


def filled(environ: dict[str, str]) -> dict[str, str]:
    """The example environment as a user fills it; every placeholder must have a filling."""
    placeholders = {k for k, v in environ.items() if v and is_placeholder(v)}
    assert placeholders <= set(FILLED), placeholders - set(FILLED)
    return {k: FILLED[k] if k in placeholders else v for k, v in environ.items()}


def passes_once_filled(environ: dict[str, str], config: BotConfig) -> Env:
    """Unfilled, check-config names every placeholder; filled, it finds nothing wrong."""
    unfilled = problems(Env.from_environ(environ), config)
    assert unfilled and all(" is a placeholder, not a secret: " in p for p in unfilled)
    env = Env.from_environ(filled(environ))
    assert problems(env, config) == []
    return env


def test_the_env_example_and_the_example_config_pass_check_config() -> None:
    config = load_config(ROOT / "config" / "bot.example.yaml")
    passes_once_filled(env_file(DEPLOY / "bot.env.example")[0], config)


def test_the_kubernetes_example_passes_check_config_and_the_replica_rules() -> None:
    config = configmap_config()
    env = passes_once_filled(k8s_environ("Deployment"), config)
    assert k8s("Deployment")["spec"]["replicas"] >= 2
    assert make_url(env.database_url).get_backend_name() == "postgresql"
    assert env.slack_app_token is None, "Socket Mode: Slack must run in HTTP mode here"
    assert env.telegram_enabled and config.telegram.webhook_url, "Telegram must use a webhook"


def test_compose_runs_two_replicas_on_one_healthy_postgres() -> None:
    services = compose()["services"]
    assert services["postgres"]["image"] == "postgres:16"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    urls = set()
    for name, service in bot_services().items():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy", name
        assert (DEPLOY / f"{service['env_file']}.example").is_file(), name
        urls.add(compose_environment(service)["BOT_DATABASE_URL"])
    assert len(bot_services()) >= 2
    (url,) = urls
    assert make_url(url).get_backend_name() == "postgresql"
    assert make_url(url).host == "postgres"


# ---- files, commands, shutdown -------------------------------------------------------------


def test_the_config_is_mounted_where_the_program_looks_by_default() -> None:
    expected = str(workdir() / DEFAULT_CONFIG_PATH)
    assert expected == "/app/config/bot.yaml"
    for kind in ("Deployment", "CronJob"):
        mounts = only_container(kind)["volumeMounts"]
        (config_mount,) = [m for m in mounts if m["name"] == "config"]
        assert (config_mount["mountPath"], config_mount["subPath"]) == (expected, "bot.yaml")
    assert "bot.yaml" in k8s("ConfigMap")["data"]
    for name, service in bot_services().items():
        assert f"../config/bot.yaml:{expected}:ro" in service["volumes"], name
    assert "BOT_CONFIG" not in k8s_environ("Deployment")


def test_the_image_carries_the_templates_in_the_working_directory() -> None:
    copies = [shlex.split(args) for args in docker_args("COPY")]
    destinations = {PurePosixPath(c[-2]): workdir() / c[-1] for c in copies if len(c) == 2}
    assert destinations[PurePosixPath("templates")] == workdir() / "templates"
    assert (ROOT / "templates" / "telegram" / "digest.j2").is_file()
    assert PurePosixPath("config/bot.example.yaml") in destinations


def test_the_image_runs_prdigest_run_as_a_non_root_user() -> None:
    assert json.loads(docker_args("ENTRYPOINT")[0]) == ["prdigest"]
    assert json.loads(docker_args("CMD")[0]) == ["run"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert scripts["project"]["scripts"]["prdigest"] == "bot.__main__:main"
    (user,) = docker_args("USER")
    uid = int(user.split(":")[0])
    assert uid != 0
    for kind in ("Deployment", "CronJob"):
        context = pod_spec(kind)["securityContext"]
        assert context["runAsNonRoot"] is True
        assert context["runAsUser"] == uid
        container = only_container(kind)
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]


def test_commands_in_deploy_files_are_real_subcommands() -> None:
    names = {command.name for command in COMMANDS}
    parser = build_parser()
    deployment_args = only_container("Deployment")["args"]
    assert parser.parse_args(deployment_args).command == "run"
    cron_args = only_container("CronJob")["args"]
    assert cron_args[0] in names
    assert parser.parse_args(cron_args).command == "digest"


def test_the_cronjob_delivers_a_configured_channel_on_its_schedule() -> None:
    cronjob = k8s("CronJob")
    _, channel_name = only_container("CronJob")["args"]
    config = configmap_config()
    channel = config.channel(channel_name)
    assert cronjob["spec"]["schedule"] == channel.schedule
    assert cronjob["spec"]["timeZone"] == config.channel_timezone(channel)
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"


def test_the_service_selects_the_server_pods_and_not_the_cron_pods() -> None:
    selector = k8s("Service")["spec"]["selector"].items()
    server = k8s("Deployment")["spec"]["template"]["metadata"]["labels"].items()
    cron = k8s("CronJob")["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"].items()
    assert selector <= server
    assert not selector <= cron


def test_the_systemd_unit_runs_prdigest_run_with_its_state_directory() -> None:
    unit = systemd_unit()
    (working_dir,) = unit["WorkingDirectory"]
    binary, *args = shlex.split(unit["ExecStart"][0])
    assert binary == f"{working_dir}/.venv/bin/prdigest"
    assert args == ["run"]
    assert unit["EnvironmentFile"] == ["/etc/prdigest/bot.env"]
    environ = dict(value.split("=", 1) for value in unit["Environment"])
    (state,) = unit["StateDirectory"]
    database = make_url(environ["BOT_DATABASE_URL"]).database or ""
    assert PurePosixPath(database).parent == PurePosixPath("/var/lib") / state
    for key, value in {
        "Restart": "on-failure",
        "KillSignal": "SIGTERM",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
    }.items():
        assert unit[key] == [value], key
    assert "User" in unit or unit.get("DynamicUser") == ["yes"]


def test_every_stop_budget_outlasts_the_graceful_shutdown() -> None:
    graceful = graceful_shutdown_seconds()
    assert int(systemd_unit()["TimeoutStopSec"][0]) > graceful
    assert k8s("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > graceful
    for name, service in bot_services().items():
        assert int(service["stop_grace_period"].removesuffix("s")) > graceful, name


def test_kustomization_lists_existing_files_and_the_deployment_image() -> None:
    (kustomization,) = documents(K8S / "kustomization.yaml")
    text = (K8S / "kustomization.yaml").read_text(encoding="utf-8")
    for resource in kustomization["resources"]:
        assert (K8S / resource).is_file(), resource
    for path in K8S.glob("*.yaml"):
        if path.name != "kustomization.yaml":
            assert path.name in text, f"{path.name} is not mentioned in kustomization.yaml"
    image_names = {image["name"] for image in kustomization["images"]}
    assert only_container("Deployment")["image"].split(":")[0] in image_names


def test_the_deploy_guide_names_only_real_variables_and_subcommands() -> None:
    guide = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    variables = set(re.findall(r"\b(?:BOT|SLACK|TELEGRAM|LARK)_[A-Z0-9_]+\b", guide))
    assert variables <= program_env_names(), variables - program_env_names()
    assert program_env_names() <= variables, "every variable is documented"
    code = " ".join(re.findall(r"```.*?```|`[^`\n]+`", guide, flags=re.DOTALL))
    used = set(re.findall(r"(?:(?<=[\s`/])|^)prdigest ([a-z][a-z-]+)", code))
    assert {"run", "check-config", "migrate", "digest"} <= used, "the command reading broke"
    assert used <= {command.name for command in COMMANDS}, used - {c.name for c in COMMANDS}
    for path in ("deploy/Dockerfile", "deploy/compose.yaml", "deploy/systemd/prdigest.service"):
        assert path in guide, path
