"""``hsc app``: what it runs and what it refuses, without starting a server
(the browser tests start it through the same command; the install test from the wheel)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

from hsc.app import APP_SCRIPT, DEFAULT_SAMPLE
from hsc.app.launch import app_environment, streamlit_command


def test_the_command_runs_the_packaged_script_with_the_local_settings() -> None:
    command = streamlit_command(port=8600, host="0.0.0.0")
    assert command[1:5] == ["-m", "streamlit", "run", str(APP_SCRIPT)]
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.port"] == "8600"
    assert options["--server.address"] == "0.0.0.0"
    assert options["--client.showSidebarNavigation"] == "false"
    assert streamlit_command()[streamlit_command().index("--server.address") + 1] == "127.0.0.1"
    assert (APP_SCRIPT.parent / "pages" / "5_Query.py").is_file()


def test_the_first_folder_is_the_one_given_else_the_one_set_else_the_sample(tmp_path) -> None:
    assert app_environment(None, None, base={})["HSC_APP_REPO"] == str(DEFAULT_SAMPLE)
    assert app_environment(None, None, base={"HSC_APP_REPO": "/x"})["HSC_APP_REPO"] == "/x"
    env = app_environment(tmp_path, tmp_path / "app.db", base={"HSC_APP_REPO": "/x"})
    assert env["HSC_APP_REPO"] == str(tmp_path.resolve())
    assert env["HSC_APP_DB"] == str((tmp_path / "app.db").resolve())
    assert DEFAULT_SAMPLE.is_dir()


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hsc", "app", str(tmp_path / "nowhere")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"hsc app: there is no folder at {tmp_path / 'nowhere'}"
