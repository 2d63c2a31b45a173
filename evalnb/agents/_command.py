"""The command-line agent: run a program per turn and read its answer from stdout, a JSON line or a file.

There is no shell: ``argv`` is a list and each element is passed verbatim after placeholder substitution, so a
prompt full of quotes, ``$`` or ``;`` reaches the program as one argument. The process runs in the run's working
directory (docs/tasks-toml.md, keys and assertions: ``file_exists`` paths resolve against it) in a new process group,
and every process it starts is marked (:mod:`evalnb.agents._processes`), so that when the call ends (a timeout, or the
program's own exit) the program and everything it started are killed, a ``setsid`` daemon that left the group
included.

Example::

    agent = Command(["python", "agent.py"], result="last_line", timeout=60)
    result = evalnb.run(evalnb.examples.path("tasks"), agent)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalnb._caps import MAX_ANSWER, note
from evalnb._lazy import homes
from evalnb._numbers import count, seconds
from evalnb.agents._base import Request, Response
from evalnb.agents._processes import MARK, Tree, signal_all
from evalnb.agents._types import BuildContext, register_agent_type
from evalnb.errors import AgentError, ConfigError

__all__ = ["Command", "CommandAgentConfig"]

PromptVia = Literal["stdin", "arg", "env"]

# The minimal environment a child gets; everything else reaches it only when named (secrets stay secret).
_BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP")
_WINDOWS_ENV = ("SYSTEMROOT", "SYSTEMDRIVE", "USERPROFILE", "COMSPEC", "PATHEXT", "WINDIR")
_PLACEHOLDERS = ("{prompt}", "{case}", "{run}", "{turn}", "{workdir}", "{suite}")
_PLACEHOLDER_RE = re.compile("|".join(re.escape(p) for p in _PLACEHOLDERS))
_CHUNK = 64 * 1024
# Seconds between SIGTERM and SIGKILL: long enough for a polite program to flush, short enough for CI.
_KILL_GRACE = 1.0
# Seconds to wait for the output pipes to close once the program has exited (a stray child may hold them).
_PIPE_GRACE = 0.5


class _Capture:
    """Reads one pipe to its end, keeping at most ``cap`` bytes and counting the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.total = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                return
            self.total += len(chunk)
            room = self.cap - len(self.buf)
            if room > 0:
                self.buf += chunk[:room]
            # Past the cap the pipe is still read (and dropped) so the program never blocks on a full pipe.

    @property
    def truncated(self) -> bool:
        return self.total > len(self.buf)


class Command:
    """An agent that runs a program for every turn.

    Args:
        argv: the program and its arguments, no shell. ``{prompt}``, ``{case}``, ``{run}``, ``{turn}``,
            ``{suite}`` and ``{workdir}`` inside an element are replaced by the request's values.
        prompt_via: ``"stdin"`` (default; the prompt is written to stdin, then stdin is closed), ``"arg"``
            (only through the ``{prompt}`` placeholder; stdin is empty) or ``"env"`` (in ``env_var``).
        env_var: the variable holding the prompt when ``prompt_via="env"``.
        env: extra variables for the child.
        pass_env: names of variables of this process to pass on (API keys, ...); only named ones pass.
        result: where the final result text comes from: ``"stdout"`` (all of it, trailing whitespace
            trimmed), ``"last_line"`` (the last non-blank line), ``"json:FIELD"`` (a field, dotted path allowed,
            of the last stdout line that is a JSON object; that object's ``usage``, token counts in the OpenAI
            shape, and ``model`` become the Response's, so the call is counted and priced) or ``"file:PATH"``
            (the content of a file the program wrote, relative to its working directory).
        max_output: the most bytes of stdout (and of stderr) kept; the rest is read and dropped, and the cut is
            noted in ``Response.meta`` and by a marker line at the end of ``stdout``.
        timeout: seconds before the program and its children are killed (SIGTERM, then SIGKILL) and the call
            fails; ``None`` leaves it to the runner's timeout, which kills them the same way.
        cwd: the program's working directory; relative to the run's working directory. Default: the run's
            working directory itself.
        encoding: how stdout and stderr are decoded; undecodable bytes become U+FFFD, never an error.
        name: a display name (default: the program's name).

    A non-zero exit code is not an error: it is recorded in ``Response.exit_code`` for the ``exit_code``
    check to judge. A program that cannot be started, a timeout, or a program that a signal killed (a segfault,
    ``kill -9``: named in the error, whatever it printed before) raises :class:`evalnb.errors.AgentError` (the
    run becomes ``degraded``).

    Example::

        agent = Command(["python", "summarize.py", "--text", "{prompt}"], prompt_via="arg")
        response = asyncio.run(agent.respond(evalnb.Request(prompt="hello", workdir=Path("."))))
        response.exit_code, response.text
        # (0, 'a summary of: hello')
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        prompt_via: PromptVia = "stdin",
        env_var: str = "EVALNB_PROMPT",
        env: Mapping[str, str] | None = None,
        pass_env: Sequence[str] = (),
        result: str = "stdout",
        max_output: int = MAX_ANSWER,
        timeout: float | None = None,
        cwd: str | os.PathLike[str] | None = None,
        encoding: str = "utf-8",
        name: str | None = None,
    ) -> None:
        if isinstance(argv, (str, bytes)) or not argv:
            raise ConfigError("Command argv must be a non-empty list of strings (there is no shell)")
        self.argv = [str(a) for a in argv]
        if prompt_via not in ("stdin", "arg", "env"):
            raise ConfigError(f"Command prompt_via must be 'stdin', 'arg' or 'env', not {prompt_via!r}")
        if prompt_via == "arg" and not any("{prompt}" in a for a in self.argv):
            raise ConfigError("Command prompt_via='arg' needs a '{prompt}' placeholder in argv")
        self.prompt_via = prompt_via
        self.env_var = env_var
        self.env = {str(k): str(v) for k, v in (env or {}).items()}
        self.pass_env = tuple(pass_env)
        self.result = _parse_result(result)
        self._result_spec = result
        self.max_output = int(count("Command max_output (bytes)", max_output, minimum=1) or 1)
        self.timeout = seconds("Command timeout", timeout, none=True)
        self.cwd = None if cwd is None else Path(cwd)
        self.encoding = encoding
        self.name = name or Path(self.argv[0]).name

    def __repr__(self) -> str:
        # Only names of passed variables, never values: pass_env is how secrets reach the child.
        parts = [repr(self.argv), f"prompt_via={self.prompt_via!r}", f"result={self._result_spec!r}"]
        if self.timeout is not None:
            parts.append(f"timeout={self.timeout}")
        if self.pass_env:
            parts.append(f"pass_env={list(self.pass_env)!r}")
        if self.env:
            parts.append(f"env={sorted(self.env)!r}")
        return f"Command({', '.join(parts)})"

    # ----------------------------------------------------------------------------------------------

    def child_env(self, request: Request | None = None) -> dict[str, str]:
        """The environment the program gets: the minimal base, named parent variables, configured ones."""
        names = _BASE_ENV + (_WINDOWS_ENV if os.name == "nt" else ())
        env = {k: os.environ[k] for k in names if k in os.environ}
        env.update({k: os.environ[k] for k in self.pass_env if k in os.environ})
        env.update(self.env)
        if request is not None and self.prompt_via == "env":
            env[self.env_var] = request.prompt
        return env

    async def preflight(self) -> None:
        """Check at start-up that the program exists and is executable (README.md, Use it in CI: exit 2 if not).

        A bare name is looked up on the ``PATH`` the program gets (:meth:`child_env`), as starting it would;
        a relative path is looked up from the current directory (and from ``cwd`` when it is given).

        Raises:
            ConfigError: naming the program and what to do about it.

        Example::

            await Command(["no-such-agent"]).preflight()
            # Traceback (most recent call last):
            # evalnb.errors.ConfigError: agent command 'no-such-agent' was not found on the PATH ...
        """
        exe = self.argv[0]
        if any(p in exe for p in _PLACEHOLDERS):
            return  # known only per call (e.g. "{workdir}/agent.sh")
        seps = [os.sep] + ([os.altsep] if os.altsep else [])
        if not any(sep in exe for sep in seps):
            path = self.child_env().get("PATH", os.defpath)
            if shutil.which(exe, path=path) is None:
                raise ConfigError(
                    f"agent command {exe!r} was not found on the PATH the program gets; install it, give its "
                    "full path, or pass the variables it needs with pass_env"
                )
            return
        given = Path(exe)
        candidates = [given] if given.is_absolute() else [Path.cwd() / given]
        if not given.is_absolute() and self.cwd is not None:
            # The program starts in the run's directory joined with cwd; a relative path may be meant from it.
            candidates.append(Path.cwd() / self.cwd / given)
        found = [c for c in candidates if c.is_file()]
        if not found:
            where = "" if given.is_absolute() else " (a relative path is taken from the current directory)"
            raise ConfigError(f"agent command {exe!r} does not exist{where}; check the path")
        if not any(os.access(c, os.X_OK) for c in found):
            raise ConfigError(
                f"agent command {exe!r} is not executable; make it executable (chmod +x) or run it through "
                "its interpreter, e.g. ['python', 'agent.py']"
            )

    def command_line(self, request: Request, workdir: Path) -> list[str]:
        """``argv`` with the request's values in place of the placeholders."""
        values = {
            "{prompt}": request.prompt,
            "{case}": request.case,
            "{run}": str(request.run),
            "{turn}": str(request.turn),
            "{suite}": request.suite,
            "{workdir}": str(workdir),
        }
        # One pass over each element, not str.format (a literal JSON argument with braces must pass unchanged)
        # and not one replace per placeholder (a prompt that says "{case}" must reach the program as written).
        return [_PLACEHOLDER_RE.sub(lambda m: values[m.group(0)], arg) for arg in self.argv]

    async def respond(self, request: Request) -> Response:
        """Run the program once for this request."""
        workdir = Path(request.workdir) if request.workdir is not None else Path.cwd()
        cwd = workdir if self.cwd is None else workdir / self.cwd
        cwd.mkdir(parents=True, exist_ok=True)
        argv = self.command_line(request, workdir)
        env = self.child_env(request)
        if any("\0" in a for a in argv) or any("\0" in v for v in env.values()):
            # The OS cannot pass a NUL inside an argument or a variable; say so instead of "embedded null byte".
            raise AgentError(
                f"could not start {self.argv[0]!r}: the prompt or a value contains a NUL character, which "
                "cannot be passed in an argument or an environment variable; use prompt_via='stdin'"
            )
        try:
            stdin_data = request.prompt.encode(self.encoding) if self.prompt_via == "stdin" else b""
        except UnicodeEncodeError as e:
            raise AgentError(
                f"the prompt cannot be written to {self.name}'s stdin as {self.encoding}: {e.reason} "
                f"({e.object[e.start : e.end]!r} at position {e.start})"
            ) from None

        tree = Tree.start()
        env[MARK] = tree.token  # inherited by every process the program starts, in its group or not
        started = time.perf_counter()
        kwargs: dict[str, Any] = {}
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True  # its own process group: a timeout kills the children too
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env=env,
                **kwargs,
            )
        except OSError as e:
            reason = e.strerror or type(e).__name__
            raise AgentError(f"could not start {self.argv[0]!r}: {reason}") from None

        out, err = _Capture(self.max_output), _Capture(self.max_output)
        try:
            if self.timeout is None:
                await self._communicate(proc, stdin_data, out, err, tree)
            else:
                try:
                    await asyncio.wait_for(self._communicate(proc, stdin_data, out, err, tree), self.timeout)
                except asyncio.TimeoutError:
                    raise AgentError(
                        f"{self.name} timed out after {self.timeout:g}s; "
                        "the process and its children were killed"
                    ) from None
        finally:
            # Whatever ended the call (a timeout, the runner cancelling us, an error, or the program's own exit),
            # no process it started may outlive it: not its group, nor what left the group.
            await _kill_group(proc, tree)

        elapsed = (time.perf_counter() - started) * 1000.0
        if proc.returncode is not None and proc.returncode < 0:
            raise AgentError(_killed(self.name, -proc.returncode, err))
        return self._response(proc.returncode, out, err, cwd, elapsed)

    async def _communicate(
        self, proc: asyncio.subprocess.Process, data: bytes, out: _Capture, err: _Capture, tree: Tree
    ) -> None:
        readers = [
            asyncio.ensure_future(out.drain(proc.stdout)),
            asyncio.ensure_future(err.drain(proc.stderr)),
        ]
        try:
            if proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if data:
                        proc.stdin.write(data)
                        await proc.stdin.drain()
                    proc.stdin.close()
            await _exited(proc)
            # A child left running may keep the pipes open: give them a moment, then stop waiting.
            _, pending = await asyncio.wait(readers, timeout=_PIPE_GRACE)
            if pending:
                await _kill_group(proc, tree)
                await asyncio.wait(pending, timeout=_KILL_GRACE)
        finally:
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)

    def _response(
        self, code: int | None, out: _Capture, err: _Capture, cwd: Path, elapsed: float
    ) -> Response:
        stdout = bytes(out.buf).decode(self.encoding, errors="replace")
        stderr = bytes(err.buf).decode(self.encoding, errors="replace")
        meta: dict[str, Any] = {"stderr": stderr, "stdout_bytes": out.total, "stderr_bytes": err.total}
        kind, arg = self.result
        text: str | None = None
        usage: dict[str, Any] | None = None
        model: str | None = None
        if kind == "stdout":
            text = stdout.rstrip()
        elif kind == "last_line":
            text = _last_line(stdout)
        elif kind == "json":
            text, problem, obj = _json_field(stdout, arg)
            if problem:
                meta["result_error"] = problem
            if isinstance(obj.get("usage"), dict):
                usage = obj["usage"]
            if isinstance(obj.get("model"), str):
                model = obj["model"]
        else:
            path = cwd / arg
            try:
                text = path.read_bytes().decode(self.encoding, errors="replace")
            except OSError as e:
                meta["result_error"] = f"result file {arg!r} could not be read: {e.strerror or e}"
        if out.truncated:
            meta["stdout_truncated"] = True
            meta["max_output"] = self.max_output
            stdout += note("stdout", self.max_output, out.total, unit="bytes")
        if err.truncated:
            meta["stderr_truncated"] = True
            meta["max_output"] = self.max_output
        return Response(
            text=text, stdout=stdout, exit_code=code, latency_ms=elapsed, meta=meta, usage=usage, model=model
        )


def _killed(name: str, signum: int, err: _Capture) -> str:
    """Why a program that a signal ended gave no answer: whatever it printed before, a crash is no answer (a
    segfault after the summary line must not pass a regex check on it)."""
    try:
        sig = signal.Signals(signum).name
    except ValueError:
        sig = f"signal {signum}"
    tail = bytes(err.buf[-200:]).decode("utf-8", errors="replace").strip().replace("\n", " ")
    return f"{name} was killed by {sig} (exit code {-signum})" + (f"; stderr ends: {tail}" if tail else "")


def _parse_result(spec: str) -> tuple[str, str]:
    if spec in ("stdout", "last_line"):
        return spec, ""
    kind, sep, arg = spec.partition(":")
    if sep and arg and kind in ("json", "file"):
        return kind, arg
    raise ConfigError(
        f"Command result must be 'stdout', 'last_line', 'json:FIELD' or 'file:PATH', not {spec!r}"
    )


def _last_line(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return None


def _json_field(stdout: str, field: str) -> tuple[str | None, str | None, dict[str, Any]]:
    """The field of the last stdout line that is a JSON object, a problem description if none, and the object."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        value: Any = obj
        for part in field.split("."):
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif (
                isinstance(value, list)
                and part.lstrip("-").isdigit()
                and -len(value) <= int(part) < len(value)
            ):
                value = value[int(part)]
            else:
                return None, f"the last JSON line of stdout has no field {field!r}", obj
        if value is None or isinstance(value, str):
            return value, None, obj
        return json.dumps(value, ensure_ascii=False), None, obj
    return None, "stdout has no line that is a JSON object", {}


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Wait until the program has exited. ``proc.wait()`` alone also waits for its pipes to close (asyncio's
    subprocess transport), which a daemon the program left behind may hold open for good."""
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while proc.returncode is None and not waiter.done():
            await asyncio.wait([waiter], timeout=0.05)
    finally:
        if not waiter.done():
            waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - the group id was reused by another user's process
        return False
    return True


async def _kill_group(proc: asyncio.subprocess.Process, tree: Tree) -> None:
    """SIGTERM the process group and every process the call marked (:mod:`evalnb.agents._processes`), then
    SIGKILL whatever is left after a grace period; reap the leader."""
    if sys.platform == "win32":  # pragma: no cover - no process groups to signal on Windows
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        return
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    strays = tree.strays()
    if not _alive(pgid) and not strays:
        if proc.returncode is None:
            await _exited(proc)
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    signal_all(strays, signal.SIGTERM, tree)
    try:
        deadline = time.monotonic() + _KILL_GRACE
        while time.monotonic() < deadline:
            if proc.returncode is None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), 0.05)
            else:
                await asyncio.sleep(0.05)
            if proc.returncode is not None and not _alive(pgid) and not tree.alive():
                return
    finally:
        # Also reached when we are cancelled again while waiting: never leave a process behind.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        for _ in range(10):  # a marked process may fork while it is being ended: until none is left
            left = tree.alive()
            if not left:
                break
            signal_all(left, signal.SIGKILL, tree)
    if proc.returncode is None:
        await _exited(proc)


# --------------------------------------------------------------------------------------------------
# evalnb.toml: [agents.NAME] type = "command"
# --------------------------------------------------------------------------------------------------


class CommandAgentConfig(BaseModel):
    """``type = "command"``: the options of :class:`Command` (``{config_dir}`` in ``argv``: the file's folder)."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str] = Field(min_length=1)
    prompt_via: Literal["stdin", "arg", "env"] = "stdin"
    env_var: str = "EVALNB_PROMPT"
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    result: str = "stdout"
    max_output: int = Field(default=MAX_ANSWER, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    cwd: str | None = None
    encoding: str = "utf-8"


def _from_config(cfg: CommandAgentConfig, ctx: BuildContext) -> Command:
    opts = cfg.model_dump()
    opts["argv"] = [a.replace("{config_dir}", str(ctx.folder)) for a in cfg.argv]
    return Command(name=ctx.name, **opts)


register_agent_type("command", CommandAgentConfig, _from_config)

# exported lazily by evalnb.agents: its public home from the start, whoever imports this module first
homes("evalnb.agents", globals(), ["Command"])
