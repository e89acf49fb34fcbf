"""README.md as a newcomer reads it: the two commands first (set up + demo, all tests), then what this
is, how to start and what works where; every document it points to exists; CI runs the test command
it names."""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SETUP = "bash scripts/setup.sh && .venv/bin/python examples/gemm_cpu_demo.py"
TESTS = "bash scripts/test.sh"


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_first_section_holds_the_two_commands():
    text = _readme()
    first = text[:text.index("\n## ")]  # before the first second-level heading
    blocks = re.findall(r"```bash\n(.*?)```", first, re.S)
    assert [b.strip() for b in blocks[:2]] == [SETUP, TESTS], blocks
    # nothing but the title, a description and prose comes before them
    assert first.index(SETUP) < 2500 and "|" not in first[:first.index(SETUP)]


def test_sections_a_newcomer_needs_come_before_the_details():
    heads = re.findall(r"^## (.+)$", _readme(), re.M)
    for h in ("Install and the first kernel", "What works where", "How it differs from TileLang",
              "Where the details are"):
        assert h in heads, heads
    assert heads.index("What works where") < heads.index("Using it") < heads.index("Benchmarks")
    assert "Status" not in heads, "the detailed capability table lives in docs/status.md"


def test_documents_the_readme_names_exist():
    for path in set(re.findall(r"`((?:docs|benchmarks|scripts|examples|tests)/[\w./-]+)`", _readme())):
        if "*" in path:
            continue
        assert os.path.exists(os.path.join(ROOT, path)), path


def test_ci_runs_the_readme_test_command():
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert TESTS in ci and "bash scripts/setup.sh" in ci


def test_the_first_kernel_runs_as_written(tmp_path):
    text = _readme()
    section = text[text.index("## Install and the first kernel"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    script = tmp_path / "first_kernel.py"  # a file: the DSL parser reads the kernel's source
    script.write_text(code + "\nassert (b == a + 1).all()\nprint('first kernel ok')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "first kernel ok" in r.stdout, r.stderr[-3000:]
