"""The embedded offline judge: a GGUF model served in-process by llama.cpp (xllamacpp).

xllamacpp runs llama.cpp's own server inside this process and listens on a free 127.0.0.1
port, so the local judge is simply another OpenAI-compatible provider: structured output,
cache, retries and usage all work unchanged. The server starts lazily on the first call,
is shared by every LLM using the same file and settings, and stops at interpreter exit.
"""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from assay._util.deps import require
from assay._util.loop_local import LoopLocal
from assay.errors import UsageError
from assay.models.providers.base import Profile
from assay.models.providers.openai_compat import OpenAICompatible
from assay.models.types import ModelRequest, ModelResponse
from assay.models.usage import Price


@dataclass(frozen=True)
class ServerSettings:
    model_path: str
    n_threads: int
    n_ctx: int  # context per parallel slot
    n_parallel: int


class _ServerPool:
    """One running server per settings. Process-wide on purpose: a second server for the same
    file would only double memory use and halve speed on the same cores."""

    def __init__(self) -> None:
        self._servers: dict[ServerSettings, Any] = {}
        self._lock = threading.Lock()
        atexit.register(self.stop_all)

    def address(self, settings: ServerSettings) -> str:
        """The running server's address, starting it if needed."""
        with self._lock:
            server = self._servers.get(settings)
            if server is None:
                server = self._servers[settings] = _start(settings)
            address: str = server.listening_address
            return address

    def current(self, settings: ServerSettings) -> str | None:
        """The address if a server for these settings is running now (never starts one)."""
        with self._lock:
            server = self._servers.get(settings)
            return server.listening_address if server is not None else None

    def stop_all(self) -> None:
        with self._lock:
            # Dropping the last reference shuts the in-process server down.
            self._servers.clear()

    def running(self) -> int:
        return len(self._servers)


SERVERS = _ServerPool()


def _start(settings: ServerSettings) -> Any:
    xlc = require("xllamacpp", extra="local", feature="the embedded local judge")
    params = xlc.CommonParams()
    params.model.path = settings.model_path
    params.n_ctx = settings.n_ctx * settings.n_parallel
    params.n_parallel = settings.n_parallel
    params.cpuparams.n_threads = settings.n_threads
    params.cpuparams_batch.n_threads = settings.n_threads
    params.verbosity = -1  # llama.cpp logs every request to stdout otherwise
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port
    try:
        server = xlc.Server(params)
    except RuntimeError as exc:
        raise UsageError(
            f"llama.cpp could not load {settings.model_path} (is it a GGUF model file?): {exc}"
        ) from exc
    _wait_until_serving(server.listening_address)
    return server


def _wait_until_serving(address: str, timeout: float = 120.0) -> None:
    """Return once the server answers. The constructor returns before llama.cpp's task loop runs,
    and a server stopped before that point never finishes stopping."""
    import time
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=5) as reply:  # loopback only
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise UsageError(
                f"the local judge at {address} did not become ready within {timeout:g} s"
            )
        time.sleep(0.05)


class LocalProvider(OpenAICompatible):
    """OpenAI-compatible provider over the in-process llama.cpp server."""

    name = "local"
    price = Price(0.0, 0.0)

    def __init__(self, settings: ServerSettings, *, timeout: float = 900.0) -> None:
        self.settings = settings
        self.model = Path(settings.model_path).name
        self.profile = Profile(
            output_modes=("json_schema", "json_object", "prompt"),
            logprobs=True,
            # More requests in flight than server slots would only queue inside llama.cpp and run
            # into client timeouts; the limiter holds them instead.
            concurrency=settings.n_parallel,
            # On a CPU judge, doubling a runaway answer's budget up to 16k tokens takes ~25 minutes
            # before it fails; 2,048 is ample for any judge answer.
            max_output_tokens=2048,
            # llama.cpp generates until its context is full when a request names no max_tokens: a
            # small judge that starts repeating itself would hold a slot for minutes. Calls that
            # need more still get it (a cut-off answer is asked again with twice the budget).
            default_max_tokens=1024,
        )
        self.timeout = timeout
        self.base_url = ""
        self._is_async = True
        self._given = None
        self._copies = None
        self._clients: LoopLocal[Any] | None = None
        self.api_key = None

    def identity(self) -> dict[str, Any]:
        # The port changes every run; the model file does not. Cache keys follow the file.
        return {
            "provider": "local",
            "model": self.model,
            "bytes": os.path.getsize(self.settings.model_path),
        }

    def endpoint_address(self) -> dict[str, Any]:
        # One server per model file and settings (see SERVERS): its slots are the shared capacity.
        return {**self.identity(), "settings": asdict(self.settings)}

    async def _ensure_started(self) -> None:
        address = SERVERS.current(self.settings)
        if address is None:
            # Starting takes seconds (loading weights): do it off the loop. The pool's lock makes
            # concurrent first calls share one server.
            address = await anyio.to_thread.run_sync(SERVERS.address, self.settings)
        if self._clients is None or self.base_url != f"{address}/v1":
            # First use, or the server was restarted on another port.
            import openai

            base_url = self.base_url = f"{address}/v1"
            self._clients = LoopLocal(
                lambda: openai.AsyncOpenAI(
                    base_url=base_url, api_key="local", timeout=self.timeout, max_retries=0
                )
            )

    def start(self) -> str:
        """Start (or find) this model's server now and return its address, e.g. to load the
        weights before a benchmark's clock starts."""
        return SERVERS.address(self.settings)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await self._ensure_started()
        return await super().complete(request)


def resolve_model_path(
    model_path: str | os.PathLike[str] | None, *, show_progress: bool = True
) -> Path:
    """Explicit path, else ASSAY_LOCAL_MODEL, else the verified default judge."""
    chosen = model_path or os.environ.get("ASSAY_LOCAL_MODEL")
    if chosen:
        path = Path(chosen).expanduser().resolve()  # one file, one server, however it is spelled
        if not path.is_file():
            raise UsageError(f"local model file not found: {path}")
        return path
    from assay.models.local_weights import default_judge_path

    return default_judge_path(show_progress=show_progress)


def local_provider(
    model_path: str | os.PathLike[str] | None = None,
    *,
    n_threads: int | None = None,
    n_ctx: int | None = None,
    n_parallel: int | None = None,
    timeout: float = 900.0,
) -> LocalProvider:
    require("xllamacpp", extra="local", feature="the embedded local judge")
    settings = ServerSettings(
        model_path=str(resolve_model_path(model_path)),
        n_threads=n_threads or int(os.environ.get("ASSAY_LOCAL_THREADS") or os.cpu_count() or 2),
        n_ctx=n_ctx or int(os.environ.get("ASSAY_LOCAL_CTX") or 4096),
        n_parallel=n_parallel or int(os.environ.get("ASSAY_LOCAL_PARALLEL") or 2),
    )
    return LocalProvider(settings, timeout=timeout)


__all__ = ["SERVERS", "LocalProvider", "ServerSettings", "local_provider", "resolve_model_path"]
