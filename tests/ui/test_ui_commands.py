"""``code-trajectory ui`` as a process: prints its URL, opens the browser, serves, stops cleanly on Ctrl-C/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from code_trajectory.core.errors import InvalidArgumentError, ProjectError
from code_trajectory.ui import commands
from code_trajectory.ui.security import cookie_name
from code_trajectory.ui.server import UIServer
from support import server_command, subprocess_env
from support.ui import record_demo, request

#: Until the CLI table lists ``ui``, the command is run through its module (the same two functions).
RUNNER = ("import argparse, sys\nfrom code_trajectory.ui import commands\np = argparse.ArgumentParser()\n"
          "commands.ui_arguments(p)\nsys.exit(commands.ui(p.parse_args()))\n")


def ui_command(*args: str) -> list[str]:
    from code_trajectory import cli

    if "ui" in cli.COMMANDS:
        return [*server_command(), "ui", *args]
    return [sys.executable, "-c", RUNNER, *args]


def start(project: Path, *args: str, **env: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(ui_command("--project", str(project), *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env(**env))
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    url = next((line.split(" ", 1)[1].strip() for line in lines if line.startswith("open ")), None)
    if url is None:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"no URL printed: {lines} {out} {err}")
    return proc, url


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serves_the_printed_url_and_stops_cleanly(project: Path, stop: signal.Signals) -> None:
    record_demo(project)
    proc, url = start(project, "--no-browser")
    try:
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("token=")[1]
        status, headers, body = request(port, "GET", "/?token=" + token)
        assert status == 200 and b"Test the signer" in body
        assert request(port, "GET", "/")[0] == 401
        status, _, _ = request(port, "GET", "/api/poll?branch=main",
                               headers={"Cookie": f"{cookie_name(port)}={token}"})
        assert status == 200
    finally:
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err
    assert token not in err  # the token is printed once, on stdout, never logged


def test_opens_the_browser_with_the_url(project: Path, tmp_path: Path) -> None:
    record_demo(project)
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > '{opened}'\n")
    fake.chmod(0o755)
    proc, url = start(project, BROWSER=f"{fake} %s")
    try:
        for _ in range(200):
            if opened.exists() and opened.read_text():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert opened.read_text() == url
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_refusals(project: Path, plain_dir: Path) -> None:
    with pytest.raises(ProjectError, match="nothing is recorded"):
        UIServer(plain_dir)
    record_demo(project)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with pytest.raises(InvalidArgumentError, match="already in use"):
            UIServer(project, port=busy.getsockname()[1])
    finally:
        busy.close()
    with pytest.raises(InvalidArgumentError, match="between 0 and 65535"):
        UIServer(project, port=70000)
    parser = argparse.ArgumentParser()
    commands.ui_arguments(parser)
    args = parser.parse_args(["--project", str(project), "--port", "0", "--no-browser"])
    assert (args.project, args.port, args.no_browser) == (str(project), 0, True)
