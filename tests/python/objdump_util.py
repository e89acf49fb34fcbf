"""The disassembly of a compiled CPU kernel, for the tests that check which instructions it uses."""
import subprocess
import tempfile


def objdump(kernel):
    """`objdump -d` of the kernel's shared library (kernel.compiled.binary)."""
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(kernel.compiled.binary)
        f.flush()
        return subprocess.run(["objdump", "-d", "--no-show-raw-insn", f.name], capture_output=True, text=True,
                              check=True).stdout
