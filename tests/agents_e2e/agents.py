"""Where the pinned agents are installed, and whether they are (no imports of the package:
install.sh runs this file as a script with any Python 3).

``python3 tests/agents_e2e/agents.py`` prints each agent's version and native executable and
exits 0 when both pinned versions are installed, 1 when one is missing or another version.
``--npm-specs`` prints the ``package@version`` arguments for npm; ``--dir`` the install folder;
``--fixture-folders`` the folders of ``tests/fixtures/real`` the pinned versions write.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VERSIONS = HERE / "versions.json"
FIXTURES = REPO / "tests" / "fixtures" / "real"

# The native executable inside each agent's platform package (the npm wrappers only find
# and start these): @anthropic-ai/claude-code-<platform>/claude and
# @openai/codex-<platform>/vendor/<target>/bin/codex.
NATIVE = {
    "claude-code": "node_modules/@anthropic-ai/claude-code-*/claude",
    "codex": "node_modules/@openai/codex-*/vendor/*/bin/codex",
}


@dataclass(frozen=True)
class Agent:
    name: str
    package: str
    version: str
    executable: Path | None  # None: not installed (or not the pinned version)
    problem: str = ""


def pins() -> dict[str, dict[str, str]]:
    data = json.loads(VERSIONS.read_text(encoding="utf-8"))
    return {name: dict(pin) for name, pin in data["agents"].items()}


def install_dir() -> Path:
    configured = os.environ.get("CLM_E2E_AGENTS_DIR")
    if configured:
        return Path(configured).resolve()
    data = json.loads(VERSIONS.read_text(encoding="utf-8"))
    return REPO / str(data["install_dir"])


def find(name: str) -> Agent:
    pin = pins()[name]
    package, version = pin["package"], pin["version"]
    root = install_dir()
    manifest = root / "node_modules" / package / "package.json"
    try:
        installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return Agent(name, package, version, None, f"{package} is not installed in {root}")
    if installed != version:
        return Agent(
            name, package, version, None, f"{package} {installed} is installed, not {version}"
        )
    candidates = sorted(glob.glob(str(root / NATIVE[name])))
    for candidate in candidates:
        path = Path(candidate)
        platform_manifest = _platform_manifest(path)
        # a platform package's version is the pin, or the pin and the platform (codex:
        # "0.171.0-linux-x64")
        found = str((platform_manifest or {}).get("version", version))
        if found != version and not found.startswith(version + "-"):
            continue
        if os.access(path, os.X_OK):
            return Agent(name, package, version, path)
    return Agent(name, package, version, None, f"no native {name} executable under {root}")


def fixture_name(name: str) -> str:
    """``claude-code-2.1.332``: the folder of ``tests/fixtures/real`` for the pinned ``name``."""
    return f"{name}-{pins()[name]['version']}"


def fixtures(name: str) -> Path:
    """What the pinned ``name`` produced in the end-to-end tests, which unit tests replay:
    ``tests/fixtures/real/<name>-<version>``. After a version bump, until
    ``regenerate_fixtures.sh`` has captured the new version, the newest version there."""
    pinned = FIXTURES / fixture_name(name)
    if pinned.is_dir():
        return pinned
    found = [p for p in FIXTURES.glob(f"{name}-*") if p.is_dir() and _version(p, name)]
    if not found:
        return pinned  # (missing: the reader says so)
    return max(found, key=lambda p: _version(p, name))


def _version(folder: Path, name: str) -> tuple[int, ...]:
    rest = folder.name[len(name) + 1 :]
    parts = rest.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else ()


def _platform_manifest(executable: Path) -> dict[str, object] | None:
    for parent in executable.parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def main(argv: list[str]) -> int:
    if "--npm-specs" in argv:
        print(" ".join(f"{p['package']}@{p['version']}" for p in pins().values()))
        return 0
    if "--dir" in argv:
        print(install_dir())
        return 0
    if "--fixture-folders" in argv:
        print(" ".join(fixture_name(name) for name in pins()))
        return 0
    ok = True
    for name in pins():
        agent = find(name)
        if agent.executable is None:
            ok = False
            print(f"{name}: {agent.problem}")
        else:
            print(f"{name}: {agent.package}@{agent.version} {agent.executable}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
