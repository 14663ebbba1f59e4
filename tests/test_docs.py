"""Every code block of README.md and docs/ runs, extracted from the Markdown: a doc that drifts
from the code fails here. How a block says what it needs: tests/docs/blocks.py.

Blocks of one page share a temporary folder (a block saved as `server.py` serves the later
ones) and run in order, each as its own process with the real servers it names (a subprocess
per block keeps them apart: a block that leaves a task running cannot disturb the next)."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.docs.blocks import PAGES, ROOT, Block, blocks_of, runnable_blocks
from tests.http.servers import unused_port
from tests.peers import redis_server

BLOCKS = runnable_blocks()
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """Each page's folder, made at first use with the page's `file` blocks saved in it (and
    the files its `copy` directives name)."""
    return {}


def folder_of(block: Block, folders: dict[Path, Path], factory: pytest.TempPathFactory) -> Path:
    if block.page not in folders:
        folder = factory.mktemp(block.page.stem)
        (folder / "examples").symlink_to(ROOT / "examples")  # `mcpkit call examples/...`
        for other in blocks_of(block.page):  # a ```json block may be a file too (mcp.json)
            if name := other.get("file"):
                (folder / name).write_text(other.code)
            for pair in other.all("copy"):
                source, target = pair.split()
                shutil.copy(ROOT / source, folder / target)
        folders[block.page] = folder
    return folders[block.page]


@pytest.fixture(scope="session")
def llm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = unused_port()
    argv = [sys.executable, "-m", "tests.docs.llm_server", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # run from a folder of its own (its log)
    with _running(argv, tmp_path_factory.mktemp("llm"), f"http://127.0.0.1:{port}/", env):
        yield f"http://127.0.0.1:{port}"


@pytest.mark.timeout(150)  # a block may take 60 s, and a server start up to 30 s beside it
@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_block_runs(
    block: Block,
    folders: dict[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    reason = block.get("skip")
    if reason is not None:
        pytest.skip(reason)
    folder = folder_of(block, folders, tmp_path_factory)
    env = _environment(folder)
    port = unused_port()
    # The one change to what a reader runs: the port it names is a free one here.
    code = block.code.replace(block.get("listens") or "8000", str(port))
    if block.get("llm") is not None:
        url = request.getfixturevalue("llm_url")
        env |= {"ANTHROPIC_BASE_URL": url, "OPENAI_BASE_URL": f"{url}/v1"}
        env |= {"ANTHROPIC_API_KEY": "sk-docs", "OPENAI_API_KEY": "sk-docs"}
    with contextlib.ExitStack() as stack:
        if block.get("redis") is not None:
            url = stack.enter_context(redis_server())
            code = code.replace("redis://127.0.0.1:6379/0", url)
        serve = block.get("serve")
        if serve is not None:
            command = serve.replace("{port}", str(port)).replace("{root}", str(ROOT))
            health = f"http://127.0.0.1:{port}/"
            stack.enter_context(_running(shlex.split(command), folder, health, env))
        _run(block, code, folder, env, port)


def _run(block: Block, code: str, folder: Path, env: dict[str, str], port: int) -> None:
    name = block.get("file")
    if block.language == "bash":
        argv = ["bash", "-e", "-o", "pipefail", "-c", code]
    else:
        if name is None or block.get("listens") is not None:  # with the port it listens on
            name = name or f"block_{block.line}.py"
            (folder / name).write_text(code)
        if block.get("pytest") is not None:
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
        elif block.get("file") is not None and block.get("listens") is None:
            # Saved for the page's later blocks: check that it loads.
            argv = [sys.executable, "-c", f"import runpy; runpy.run_path({name!r}, run_name='doc')"]
        else:
            args = (block.get("args") or "").replace("{port}", str(port))
            argv = [sys.executable, name, *shlex.split(args)]
    if block.get("listens") is not None:
        with _running(argv, folder, f"http://127.0.0.1:{port}/", env):
            return
    stdin = (block.get("stdin") or "").replace("\\n", "\n")
    timeout = float(block.get("timeout") or 60)
    done = subprocess.run(
        argv,
        cwd=folder,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.id} exited {done.returncode}:\n{output}"
    for expected in block.all("expect"):
        assert expected in output, f"{block.id}: {expected!r} not in:\n{output}"


def _environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    # A doc's program may keep things under the user's home (tokens, consent): this folder.
    env |= {"HOME": str(folder), "XDG_CONFIG_HOME": str(folder / ".config")}
    # The browser an OAuth login opens: one that follows the redirects (tests/docs/browser.py).
    env["BROWSER"] = f"{sys.executable} {ROOT / 'tests' / 'docs' / 'browser.py'} %s"
    env.pop("PYTHONPATH", None)
    return env


@contextlib.contextmanager
def _running(argv: list[str], cwd: Path, health: str, env: dict[str, str]) -> Iterator[None]:
    """`argv` started, and stopped after the block; up once `health` answers HTTP. Its output
    goes to a file (a pipe nobody reads could fill and stall it), shown if it fails."""
    if shutil.which(argv[0], path=str(BIN)):  # mcpkit, python, uvicorn: the venv's
        argv = [str(BIN / argv[0]), *argv[1:]]
    log = cwd / f"server-{unused_port()}.log"
    with log.open("w") as output:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=output, stderr=output)
    try:
        _wait_for(health, process, log)
        yield
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise AssertionError(f"{process.args} exited {process.returncode}:\n{log.read_text()}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise AssertionError(f"{process.args} did not answer:\n{log.read_text()}") from None
            time.sleep(0.05)


KNOWN = {"file", "copy", "serve", "listens", "llm", "redis", "stdin", "args", "pytest"}
KNOWN |= {"expect", "skip", "sh", "timeout"}


def test_no_directive_rewrites_a_block() -> None:
    """Every directive is one tests/docs/blocks.py lists: none changes the code a reader
    runs (a block that needs more is made complete, not patched here)."""
    every = [block for page in PAGES for block in blocks_of(page)]
    unknown = {(b.id, name) for b in every for name, _ in b.directives if name not in KNOWN}
    assert not unknown


def test_readme_and_architecture_name_every_package() -> None:
    packages = [p.name for p in (ROOT / "src" / "mcpkit").iterdir() if (p / "__init__.py").exists()]
    readme = (ROOT / "README.md").read_text()
    built = readme[readme.index("## How it is built") :]
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert len(packages) >= 14
    for name in packages:
        assert f"  {name}/ " in built, name
        assert f"**{name}/**" in architecture, name


# A Markdown link's target, or a path out of the page's folder named in backquotes.
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)|`(\.\./[^`\s]+)`")


def test_relative_links_point_inside_the_repository() -> None:
    """A link that works on GitHub works in any clone: no path out of the repository."""
    broken = []
    for page in PAGES:
        for link, quoted in _LINK.findall(page.read_text()):
            target = link or quoted
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken


def test_a_page_importing_the_otel_sdk_says_to_install_it() -> None:
    for page in PAGES:
        text = page.read_text()
        if "from opentelemetry.sdk" in text:
            installs = [line for line in text.splitlines() if "pip install" in line]
            assert any("opentelemetry-sdk" in line for line in installs), page
