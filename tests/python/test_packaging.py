"""Installing: the package's optional extras cover what scripts/setup.sh installs, and setup.sh says what it
is doing before each slow step."""
import pathlib
import re
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement):
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def test_extras_name_the_packages_each_feature_needs():
    extras = {k: {_name(r) for r in v} for k, v in _project()["optional-dependencies"].items()}
    assert "nvidia-cuda-nvrtc" in extras["cuda"]
    assert {"pygls", "lsprotocol"} <= extras["lsp"]
    assert extras["plots"] == {"matplotlib"}
    assert extras["ray"] == {"ray"}
    assert {"pytest", "pytest-lsp", "pytest-asyncio"} <= extras["dev"]
    assert extras["lsp"] | extras["plots"] | extras["test"] <= extras["dev"]


def test_setup_installs_nothing_the_extras_do_not_name():
    """Every Python package setup.sh installs is a dependency or in an extra, so `pip install ".[...]"`
    reaches the same environment."""
    project = _project()
    declared = {_name(r) for r in project["dependencies"]}
    for reqs in project["optional-dependencies"].values():
        declared |= {_name(r) for r in reqs}
    script = (ROOT / "scripts" / "setup.sh").read_text()
    installed = set()
    for cmd in re.findall(r"pip install -q ((?:[^\n\\]|\\\n)+)", script):
        for word in cmd.replace("\\\n", " ").split():
            word = word.strip('"')
            if word and not word.startswith("-") and word != ".":
                installed.add(_name(word))
    assert {"pytest", "nvidia-cuda-nvrtc", "matplotlib", "ray"} <= installed  # the parse found them
    installed -= {"pip"}
    assert installed <= declared, sorted(installed - declared)


def test_setup_announces_each_install_step():
    """The script was silent for minutes: each pip/apt/venv/build command comes right after a `step` line."""
    lines = [t.strip() for t in (ROOT / "scripts" / "setup.sh").read_text().splitlines()]
    slow = [i for i, t in enumerate(lines)
            if re.match(r"(pip install|apt-get update|\[ -d \.venv \])", t)]
    assert len(slow) >= 6
    for i in slow:
        window = " ".join(lines[max(0, i - 2):i + 1])
        assert re.search(r'\bstep "', window), f"setup.sh line {i + 1} runs without saying so: {lines[i]}"
    out = subprocess.run(["bash", "-n", str(ROOT / "scripts" / "setup.sh")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_import_name_is_tilelang():
    project = _project()
    assert project["name"] == "tilelang-cpp"
    assert project["scripts"]["tilelang"] == "tilelang.cli:main"
    out = subprocess.run([sys.executable, "-c", "import tilelang, os; print(os.path.basename(os.path.dirname("
                          "tilelang.__file__)))"], capture_output=True, text=True)
    assert out.stdout.strip() == "tilelang", out.stderr
