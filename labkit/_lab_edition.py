"""The lab's Jupyter server extension: `/labkit/open/<lesson>` opens a lesson with JupyterLab in its edition's language.

`make lab` prints and opens `/labkit/open/notebooks/00_start_here.ipynb` (`zh-CN/notebooks/...` for `LANG=zh_CN`),
and so do the Binder badges: JupyterLab's language (its own Settings → Language) becomes the edition's, Chinese
for a lesson under `zh-CN/` (the language pack `jupyterlab-language-pack-zh-CN` is pinned), and the lesson opens.
`python -m labkit._lab_edition` enables the extension in this Python's Jupyter configuration (`make env`, Binder).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from labkit._i18n import folder_language

__all__: list[str] = []

_LOCALES = {"zh_CN": "zh_CN", "en": "default"}
"""JupyterLab's `locale` setting for each edition: "default" is JupyterLab's own (English here)."""
_SETTING = Path("@jupyterlab", "translation-extension", "plugin.jupyterlab-settings")
_CONFIG = Path("etc", "jupyter", "jupyter_server_config.d", "labkit.json")


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "labkit._lab_edition"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from tornado import web

    class OpenLesson(JupyterHandler):
        @web.authenticated
        def get(self, path: str) -> None:
            lab = next(iter(serverapp.extension_manager.extension_apps.get("jupyterlab", ())), None)
            if lab is not None:
                choose_language(Path(lab.user_settings_dir), folder_language(Path(PurePosixPath(path).parent)))
            self.redirect(url_path_join(self.base_url, "lab", "tree", path))

    route = url_path_join(serverapp.web_app.settings["base_url"], "labkit", "open", "(.*)")
    serverapp.web_app.add_handlers(".*$", [(route, OpenLesson)])


def choose_language(settings_dir: Path, language: str) -> None:
    """Set JupyterLab's interface language to the edition's; a language the learner chose for another edition stays."""
    file = settings_dir / _SETTING
    try:
        import json5

        settings = json5.loads(file.read_text(encoding="utf-8")) if file.exists() else {}
    except ValueError:
        settings = {}
    current, wanted = settings.get("locale", "default"), _LOCALES[language]
    if current == wanted or (language == "en" and current not in _LOCALES.values()):
        return
    settings["locale"] = wanted
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def _enable(prefix: Path) -> Path:
    config = prefix / _CONFIG
    config.parent.mkdir(parents=True, exist_ok=True)
    enabled = {"ServerApp": {"jpserver_extensions": {"labkit._lab_edition": True}}}
    config.write_text(json.dumps(enabled, indent=2) + "\n")
    return config


if __name__ == "__main__":
    sys.stdout.write(f"enabled the lab's server extension: {_enable(Path(sys.prefix))}\n")
