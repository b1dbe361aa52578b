"""``hsc app``: start the Streamlit app from an installed package.

The options the app needs are given on Streamlit's command line rather than
in a ``.streamlit/config.toml``, which Streamlit only reads from the current
folder: ``hsc app`` behaves the same from any folder. Nothing here imports
Streamlit; without the ``app`` extra the command says what to install.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from hsc.app import APP_SCRIPT, DEFAULT_SAMPLE

# What `pip install "hsc[app]"` brings and the pages import.
APP_MODULES = ("streamlit", "plotly", "pandas")
INSTALL_HINT = "hsc app needs the app extra: pip install 'hsc[app]'"

# Streamlit's settings for a local tool (each one's reason beside it).
STREAMLIT_OPTIONS: dict[str, str] = {
    # The app reads local source code: keep it on this machine unless --host says otherwise.
    "server.address": "127.0.0.1",
    "server.headless": "true",
    # Nothing to watch: the app is not being edited while it runs, and watching a repository (with its
    # virtualenv) costs inotify watches and CPU while idle.
    "server.fileWatcherType": "none",
    "server.runOnSave": "false",
    "browser.gatherUsageStats": "false",
    # A local tool, not a deployment: no "Deploy" button in the toolbar.
    "client.toolbarMode": "minimal",
    # The sidebar lists the pages itself (hsc/app/ui/layout.py), named after their stages.
    "client.showSidebarNavigation": "false",
    # Streamlit runs a full garbage collection after every script run. With the model loaded that walks
    # about half a million objects: 150-380 ms on a 2-core machine, holding the interpreter lock, so a
    # finished slider step waits for it. Python's own collector still runs; only the full pass per rerun
    # is skipped.
    "runner.postScriptGC": "false",
}


def missing_modules() -> list[str]:
    """The app extra's modules that cannot be imported here."""
    return [name for name in APP_MODULES if importlib.util.find_spec(name) is None]


def streamlit_command(port: int | None = None, host: str | None = None) -> list[str]:
    """The ``python -m streamlit run`` command line for the app's main script."""
    options = dict(STREAMLIT_OPTIONS)
    if host:
        options["server.address"] = host
    if port is not None:
        options["server.port"] = str(port)
    command = [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT)]
    for name, value in options.items():
        command += [f"--{name}", value]
    return command


def app_environment(
    repository: str | Path | None, database: str | Path | None, base: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment the app reads at its first start: which folder to index
    (``HSC_APP_REPO``: ``repository``, else the one already set, else the bundled sample) and its
    database (``HSC_APP_DB``)."""
    env = dict(os.environ if base is None else base)
    if repository:
        env["HSC_APP_REPO"] = str(Path(repository).expanduser().resolve())
    elif not env.get("HSC_APP_REPO", "").strip():
        env["HSC_APP_REPO"] = str(DEFAULT_SAMPLE)
    if database:
        env["HSC_APP_DB"] = str(Path(database).expanduser().resolve())
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def repository_problem(repository: str | Path | None) -> str | None:
    """Why ``repository`` cannot be the app's first folder, or None."""
    if repository is None:
        return None
    path = Path(repository).expanduser()
    if not path.exists():
        return f"there is no folder at {path}"
    if not path.is_dir():
        return f"{path} is a file; give the repository's top folder"
    return None


def run_app(
    repository: str | Path | None = None,
    database: str | Path | None = None,
    port: int | None = None,
    host: str | None = None,
) -> int:
    """Replace this process with Streamlit serving the app; returns an exit
    status only when it cannot start (2: the app extra or the folder is missing)."""
    missing = missing_modules()
    if missing:
        print(f"{INSTALL_HINT} (missing: {', '.join(missing)})", file=sys.stderr)
        return 2
    problem = repository_problem(repository)
    if problem:
        print(f"hsc app: {problem}", file=sys.stderr)
        return 2
    command = streamlit_command(port, host)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, app_environment(repository, database))
    return 0  # not reached: execve does not return
