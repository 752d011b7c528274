"""A small in-tree PEP 517 build backend for the pure-Python `leir`
package, so that ``pip install ./python`` needs nothing from a package
index (no setuptools, no wheel): the package is plain .py files.

The wheel also records where it was built from (leir/_build_info.py), so
that an installed package can find a libleir built in that source tree.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent.parent  # python/
TAG = "py3-none-any"


def _meta() -> Dict[str, object]:
    text = (HERE / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+

        project = tomllib.loads(text)["project"]
        return {
            "name": project["name"],
            "version": project["version"],
            "summary": project.get("description", ""),
            "requires_python": project.get("requires-python", ""),
            "dependencies": list(project.get("dependencies", [])),
            "license": project.get("license", {}).get("text", ""),
        }
    except ImportError:
        def field(key: str) -> str:
            m = re.search(rf'^{key}\s*=\s*"([^"]*)"', text, re.M)
            return m.group(1) if m else ""

        deps = re.search(r"^dependencies\s*=\s*\[([^\]]*)\]", text, re.M)
        return {
            "name": field("name"),
            "version": field("version"),
            "summary": field("description"),
            "requires_python": field("requires-python"),
            "dependencies": re.findall(r'"([^"]+)"', deps.group(1)) if deps else [],
            "license": "",
        }


def _metadata_text(m: Dict[str, object]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {m['name']}",
        f"Version: {m['version']}",
        f"Summary: {m['summary']}",
    ]
    if m["license"]:
        lines.append(f"License: {m['license']}")
    if m["requires_python"]:
        lines.append(f"Requires-Python: {m['requires_python']}")
    for d in m["dependencies"]:  # type: ignore[union-attr]
        lines.append(f"Requires-Dist: {d}")
    readme = HERE / "README.md"
    if readme.exists():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


def _package_files() -> List[Tuple[str, bytes]]:
    out = []
    for path in sorted((HERE / "leir").rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        if path.name == "_build_info.py":
            continue
        out.append((path.relative_to(HERE).as_posix(), path.read_bytes()))
    root = HERE.parent
    tree = str(root) if (root / "meson.build").exists() else ""
    info = (
        '"""Written by the build backend: where this package was built from."""\n'
        f"SOURCE_TREE = {tree!r}\n"
    )
    out.append(("leir/_build_info.py", info.encode()))
    return out


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    m = _meta()
    dist = f"{m['name']}-{m['version']}"
    info = f"{dist}.dist-info"
    files = list(files) + [
        (f"{info}/METADATA", _metadata_text(m).encode()),
        (
            f"{info}/WHEEL",
            f"Wheel-Version: 1.0\nGenerator: leir_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode(),
        ),
        (f"{info}/top_level.txt", b"leir\n"),
    ]
    record = [_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{dist}-{TAG}.whl"
    stamp = (1980, 1, 1, 0, 0, 0)
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            zi = zipfile.ZipInfo(n, stamp)
            zi.external_attr = 0o644 << 16
            z.writestr(zi, d, zipfile.ZIP_DEFLATED)
    return name


# ---- PEP 517 hooks -------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _write_wheel(wheel_directory, _package_files())


def build_editable(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    # A .pth file puts python/ on sys.path: edits take effect at once.
    return _write_wheel(wheel_directory, [("leir_editable.pth", (str(HERE) + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    m = _meta()
    dist = f"{m['name']}-{m['version']}"
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in ["pyproject.toml", "README.md", "_build", "leir", "tests"]:
            path = HERE / rel
            if not path.exists():
                continue
            tar.add(
                str(path),
                arcname=f"{dist}/{rel}",
                filter=lambda ti: None if "__pycache__" in ti.name or ti.name.endswith("_build_info.py") else ti,
            )
        pkg_info = _metadata_text(m).encode()
        ti = tarfile.TarInfo(f"{dist}/PKG-INFO")
        ti.size = len(pkg_info)
        ti.mtime = int(time.time())
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
