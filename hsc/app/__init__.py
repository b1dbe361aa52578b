"""hsc in a browser: the Streamlit app, shipped in the package.

``hsc app [REPO]`` starts it (:mod:`hsc.app.launch`). ``app.py`` is the main
script (the Repository page), ``pages/`` holds one script a stage, ``ui/``
what they share. This module imports nothing heavy: the launcher and the
command line read the paths below without Streamlit installed.
"""

from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
# The main script Streamlit runs; its folder holds pages/, which Streamlit finds beside it.
APP_SCRIPT = APP_DIR / "app.py"
# The bundled sample repositories (shipped in the wheel, so the app has something to show from any folder).
SAMPLES_DIR = APP_DIR.parent / "samples"
DEFAULT_SAMPLE = SAMPLES_DIR / "inventory_py"
