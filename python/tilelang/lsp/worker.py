"""The worker process that runs a user's file for the editor tools, and the two ways to call it.

User code never runs in the language server: each job (analyse a file, write a lower trace) runs in a
fresh ``python -m tilelang.lsp.worker`` process with a time limit, so a hanging, crashing or
state-leaking file cannot take the server down. The process imports tilelang before it reads its job,
so the server keeps one such process started ahead of time (``WorkerPool``) and a job pays only for
running the file and compiling its kernels (which the disk cache makes cheap after the first time).

Protocol: one JSON object on stdin ({"op": "analyze" | "trace", ...}), one JSON object on the process's
original stdout. Whatever the user's code prints goes to stderr.
"""
import asyncio
import json
import os
import subprocess
import sys

DEFAULT_TIMEOUT_S = 60.0


class WorkerError(Exception):
    """The worker timed out or died without an answer."""


def _command():
    return [sys.executable, "-m", "tilelang.lsp.worker"]


def _env():
    """The worker imports the same tilelang as this process, whatever PYTHONPATH the editor set."""
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _parse(out, err, returncode):
    for line in reversed(out.decode("utf-8", errors="replace").splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = err.decode("utf-8", errors="replace").strip().splitlines()[-15:]
    raise WorkerError(f"the worker process exited with code {returncode} without an answer"
                      + (":\n" + "\n".join(tail) if tail else ""))


def run_job(job, timeout=DEFAULT_TIMEOUT_S):
    """Runs one job in a fresh worker process and returns its answer (for the command line)."""
    try:
        proc = subprocess.run(_command(), input=json.dumps(job).encode(), capture_output=True, timeout=timeout,
                              env=_env())
    except subprocess.TimeoutExpired:
        raise WorkerError(f"compiling the kernels of this file took more than {timeout:g} s; the worker was "
                          "stopped") from None
    return _parse(proc.stdout, proc.stderr, proc.returncode)


class WorkerPool:
    """Runs jobs in worker processes for the language server, one at a time, with one process started
    ahead (already past its imports) for the next job."""

    def __init__(self, prefork=True):
        self.prefork = prefork
        self._spare = None
        self._lock = asyncio.Lock()
        self.jobs = 0

    async def _spawn(self):
        return await asyncio.create_subprocess_exec(*_command(), stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=_env())

    async def warm(self):
        if self.prefork and self._spare is None:
            self._spare = await self._spawn()

    async def run(self, job, timeout=DEFAULT_TIMEOUT_S):
        async with self._lock:
            proc, self._spare = self._spare, None
            if proc is None or proc.returncode is not None:
                proc = await self._spawn()
            self.jobs += 1
            try:
                out, err = await asyncio.wait_for(proc.communicate(json.dumps(job).encode()), timeout)
            except asyncio.TimeoutError:
                raise WorkerError(f"compiling the kernels of this file took more than {timeout:g} s; the worker "
                                  "was stopped (raise the 'timeout' setting if this is expected)") from None
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
                await self.warm()
            return _parse(out, err, proc.returncode)

    async def close(self):
        if self._spare is not None and self._spare.returncode is None:
            self._spare.kill()
            await self._spare.wait()
        self._spare = None


def _answer(job):
    from . import analysis

    op = job.get("op")
    if op == "analyze":
        return analysis.analyze(job["path"], job["text"], job.get("target") or "cuda -arch=sm_80")
    if op == "trace":
        return analysis.lower_trace(job["path"], job["text"], job.get("kernel"), job.get("target") or "cuda -arch=sm_80",
                                    job["out_dir"])
    return {"error": f"unknown worker op {op!r}"}


def main():
    # The answer goes to the original stdout; anything the user's code prints goes to stderr.
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import tilelang  # noqa: F401 -- the expensive import happens before the job arrives

    from . import analysis  # noqa: F401

    raw = sys.stdin.buffer.read().decode("utf-8")
    if not raw.strip():  # the server went away before giving this (spare) worker a job
        os._exit(0)
    job = json.loads(raw)
    try:
        answer = _answer(job)
    except BaseException as e:  # noqa: BLE001 -- reported to the caller, which shows it
        import traceback

        answer = {"error": f"internal error in the tilelang worker: {type(e).__name__}: {e}",
                  "traceback": traceback.format_exc()}
    with os.fdopen(answer_fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(answer) + "\n")
    os._exit(0)  # skip interpreter teardown (user modules' atexit hooks, native destructors)


if __name__ == "__main__":
    main()
