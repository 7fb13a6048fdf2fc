"""The project as a wheel holds what the web serves beside its modules: a non-editable install
(``pip install .``, as deploy/Dockerfile makes the image) has the web's static files and its
pages' templates (pyproject's package-data), and requires Jinja2. The wheel is built, with no
network and no install, from what the Dockerfile copies into the image."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "services" / "web"


def _copied_as_the_image(to: Path) -> None:
    """deploy/Dockerfile's COPY lines, done into ``to``."""
    for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines():
        if not line.startswith("COPY "):
            continue
        *sources, dest = line.split()[1:]
        for source in sources:
            target = to / dest / Path(source).name if dest.endswith("/") else to / dest
            target.parent.mkdir(parents=True, exist_ok=True)
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(ROOT / source, target)


def test_the_wheel_holds_the_web_s_static_files_and_templates(tmp_path):
    source, out = tmp_path / "app", tmp_path / "wheel"
    _copied_as_the_image(source)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = next(z.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    served = {p.relative_to(ROOT).as_posix() for folder in ("static", "templates")
              for p in (WEB / folder).iterdir() if p.is_file()}
    assert any(n.endswith(".html") for n in served) and any(n.endswith(".js") for n in served)
    assert served <= names, sorted(served - names)
    assert "Requires-Dist: jinja2" in metadata
