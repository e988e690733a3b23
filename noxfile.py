"""nox sessions: `conformance` (run every case, write results and the report), `matrix` (the same on
several builds, one report), `report`, `tests`, `explore` (generated programs, findings), `selftest`,
`bench`, `lint`, `typecheck`.

Which torch a session tests is chosen by `--torch CHOICE` in the posargs or the
TORCH_CONFORMANCE_TORCH environment variable (posargs win); `nox -s SESSION -- --help` lists the
choices, the environment variables and the options of the command that takes the rest of the
posargs, without installing torch. Each choice's torch is installed once, into an environment of
its own under .nox/_torch/<choice>, which every session reuses; each session says which torch it
tests.

Everything else in the posargs goes to `torch-conformance run` (conformance) or pytest (tests):
  nox -s conformance -- --torch 2.13.0 -k mutation --devices cpu

`conformance` writes the results (results/results.jsonl) and renders your report from them into
results/report/, also when the run fails (reports/ holds the published ones);
`nox -s report -- RESULTS... [-o DIR]` renders one from any results files (no torch needed), and
`nox -s report -- diff A B` compares two runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import nox
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

TORCH_ENV = "TORCH_CONFORMANCE_TORCH"
PYTHON_ENV = "TORCH_CONFORMANCE_PYTHON"
NIGHTLY_ENV = "TORCH_CONFORMANCE_NIGHTLY_INDEX"
CPU_INDEX_ENV = "TORCH_CONFORMANCE_CPU_INDEX"
ROOT = Path(__file__).parent
TORCH_ENVS = ROOT / ".nox" / "_torch"


USER_REPORT = "results/report"  # your report; reports/ holds the published ones (reports/releases, reports/explore)

CHOICES = "auto, installed, default, stable, nightly[-VARIANT], a version (2.13.0) or a specifier (>=2.12,<2.14)"
ENVIRONMENT = (
    (TORCH_ENV, "the --torch choice when the posargs give none"),
    (PYTHON_ENV, "the Python whose torch `installed` and `auto` take (default: the Python running nox)"),
    (CPU_INDEX_ENV, "a CPU-only wheel index: on a machine without a GPU torch comes from it, which keeps out the "
     "several GB of CUDA packages of the default index's torch; set it before a choice's first install (or "
     "remove .nox/_torch/<choice> to start over)"),
    (NIGHTLY_ENV, "the nightly index URL, without the variant (--torch nightly[-VARIANT])"),
)
TORCH_HELP = "\n".join([
    f"  --torch CHOICE  the torch the session tests (default: ${TORCH_ENV}, else auto):",
    "      auto        the torch of the Python running nox if it has one, else `default`",
    f"      installed   the torch of the Python running nox (or ${PYTHON_ENV}), never replaced",
    "      default     what `pip install torch` gives from the configured index",
    "      stable      the index's latest stable release (`pip install --upgrade torch`)",
    "      nightly     PyTorch's nightly CPU build; nightly-VARIANT (e.g. nightly-cu128) for another;",
    f"                  needs ${NIGHTLY_ENV}",
    "      2.13.0      a pinned release (a PEP 440 specifier works too: '>=2.12,<2.14')",
    "    Each choice's torch is installed once, into .nox/_torch/<choice>, and every session reuses it.",
    "",
    "environment:",
    *(textwrap.fill(text, 100, initial_indent=f"  {name:<33}", subsequent_indent=" " * 35)
      for name, text in ENVIRONMENT),
])


class ChoiceError(ValueError):
    pass


def split_torch_arg(posargs: list[str]) -> tuple[str, list[str]]:
    """(`--torch` value or the env var or 'auto', the remaining posargs)."""
    choice = os.environ.get(TORCH_ENV) or "auto"
    rest: list[str] = []
    args = iter(posargs)
    for arg in args:
        if arg == "--torch":
            choice = next(args, "")
            if not choice:
                raise ChoiceError(f"--torch needs a value: {CHOICES}")
        elif arg.startswith("--torch="):
            choice = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return choice, rest


def torch_install_args(choice: str, nightly_index: str | None) -> list[str] | None:
    """The `pip install` arguments for a torch choice; None for the calling environment's torch."""
    if choice in ("installed", "auto"):
        return None
    if choice == "default":
        return ["torch"]
    if choice == "stable":
        return ["--upgrade", "torch"]
    if choice == "nightly" or choice.startswith("nightly-"):
        variant = choice.partition("-")[2] or "cpu"
        if not nightly_index:
            raise ChoiceError(
                f"--torch {choice} needs the nightly index: set {NIGHTLY_ENV} to its URL "
                "(without the variant); the harness never hard-codes a package host"
            )
        return ["--pre", "--upgrade", "torch", "--index-url", f"{nightly_index.rstrip('/')}/{variant}"]
    with contextlib.suppress(InvalidVersion):
        Version(choice)  # PEP 440, as pip reads it
        return [f"torch=={choice}"]
    with contextlib.suppress(InvalidSpecifier):
        if SpecifierSet(choice):  # an empty one ('--torch=') is no choice
            return [f"torch{choice}"]
    raise ChoiceError(f"--torch {choice!r} is not a torch choice: write {CHOICES}")


def wants_help(posargs: list[str]) -> bool:
    """Whether the posargs ask for help (-h or --help before any `--`, after which they go to pytest)."""
    head = posargs[: posargs.index("--")] if "--" in posargs else posargs
    return any(arg in ("-h", "--help") for arg in head)


def torch_choice(session: nox.Session) -> tuple[str, list[str]]:
    """The session's torch choice and the rest of its posargs; a choice that is not one is a usage
    error here, before the session installs anything."""
    try:
        choice, rest = split_torch_arg(list(session.posargs))
        torch_install_args(choice, os.environ.get(NIGHTLY_ENV))
    except ChoiceError as exc:
        given = any(a == "--torch" or a.startswith("--torch=") for a in session.posargs)
        session.error(str(exc) if given else f"{exc} (the choice came from {TORCH_ENV})")
    return choice, rest


def _help_text(python: str, argv: list[str]) -> str | None:
    """What `python argv` prints in the checkout, or None where it fails (a module it cannot import)."""
    try:
        out = subprocess.run(  # noqa: S603  # a Python of this session, a fixed module's --help
            [python, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def show_help(session: nox.Session, usage: str, command: list[str], install: str = ".") -> None:
    """Print the session's usage (its own options) and the help of the command that takes the rest of
    its posargs, without installing torch. A `torch-conformance` subcommand's help needs the checkout's
    package and its dependencies, not torch: it comes from the Python running nox where that imports
    them, else from the session's environment, where the package is installed first unless it is
    there already. pytest's and mypy's come from the session's environment, where their plugins are."""
    print(f"usage: nox -s {session.name} -- {usage}\n\n{TORCH_HELP}\n")
    argv = ["-m", *command, "--help"]
    pythons = [sys.executable] if command[0] == "conformance" else []
    with contextlib.suppress(ValueError):  # ValueError: no environment of its own (nox --no-venv)
        pythons.append(str(Path(session.bin) / "python"))
    for python in pythons:
        text = _help_text(python, argv)
        if text is not None:
            print(text, end="")
            return
    session.install("-e", install)
    session.run("python", *argv)


def calling_torch_site(python: str) -> str | None:
    """The site-packages folder holding `python`'s torch, or None if it has no torch."""
    probe = "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))"
    try:
        out = subprocess.run(  # noqa: S603  # the user's own interpreter, a fixed script
            [python, "-c", probe], capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else None


def gpu_present() -> bool:
    """Whether this machine shows an NVIDIA or AMD GPU (device nodes), without importing torch."""
    return any(Path(p).exists() for p in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/kfd"))


def torch_env_dir(choice: str) -> Path:
    """The folder of the one environment that holds the torch of `choice`, shared by every session."""
    return TORCH_ENVS / re.sub(r"[^A-Za-z0-9._-]+", "_", choice)


def _site(python: Path) -> str:
    out = subprocess.run(  # noqa: S603  # the environment's own interpreter, a fixed script
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def _torch_env(session: nox.Session, choice: str, args: list[str]) -> str:
    """Create or update the shared environment for `choice`; its site-packages folder."""
    env = torch_env_dir(choice)
    python = env / "bin" / "python"
    if not python.exists():
        session.log(f"creating the environment for --torch {choice} in {env} (shared by every session)")
        session.run(sys.executable, "-m", "venv", str(env), external=True)
    index = os.environ.get(CPU_INDEX_ENV)
    if index and not gpu_present() and not choice.startswith("nightly"):
        args = [*args, "--index-url", index]
    elif not gpu_present() and not choice.startswith("nightly"):
        session.log(f"no GPU here, and {CPU_INDEX_ENV} names no CPU-only wheel index: pip takes what the index "
                    "offers, which for torch may be a CUDA build with several GB of CUDA packages")
    session.run(str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *args, external=True)
    return _site(python)


def install_torch(session: nox.Session, choice: str) -> None:
    """Give the session's venv the chosen torch, and say which one it is.

    Every torch lives in an environment of its own: the caller's (`installed`, or `auto` when the
    Python running nox has one), never copied or replaced, or one environment per choice under
    .nox/_torch/, created once and reused by every session. A .pth file appends that environment's
    site-packages to the session's path, after the session's own packages; a torch left in the
    session's own venv (an older noxfile put one there) is removed so that it cannot shadow it.
    """
    args = torch_install_args(choice, os.environ.get(NIGHTLY_ENV))
    site: str | None
    if args is None:
        python = os.environ.get(PYTHON_ENV) or sys.executable
        site = calling_torch_site(python)
        if site is None:
            if choice == "installed":
                session.error(f"--torch installed: {python} has no importable torch; install one there, "
                              f"set {PYTHON_ENV} to a Python that has it, or pick --torch 2.13.0")
            session.log(f"{python} has no torch; using the index's default (--torch default)")
            site = _torch_env(session, "default", ["torch"])
    else:
        site = _torch_env(session, choice, args)
    venv_site = session.run("python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                            silent=True)
    assert isinstance(venv_site, str)
    own = Path(venv_site.strip().splitlines()[-1])
    if (own / "torch").is_dir():
        session.run("python", "-m", "pip", "uninstall", "-y", "-q", "torch")
    own.joinpath("torch_conformance_torch.pth").write_text(site + "\n")
    session.run("python", "-c", "import torch, os; print('testing torch', torch.__version__, 'git', "
                "torch.version.git_version, 'from', os.path.dirname(torch.__file__))")


def _option_value(args: list[str], flag: str) -> str | None:
    """The value of `--flag VALUE` or `--flag=VALUE` among run arguments (the last one wins)."""
    value = None
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value


def report_args(run_args: list[str], out: str = USER_REPORT) -> list[str]:
    """The `torch-conformance report` arguments that render the results of `run run_args`."""
    results = _option_value(run_args, "--results") or os.environ.get("TORCH_CONFORMANCE_RESULTS") \
        or "results/results.jsonl"
    args = ["report", results, "-o", out, "--exit-zero"]
    expectations = _option_value(run_args, "--expectations")
    if expectations:
        args += ["--expectations", expectations]
    return args


@nox.session
def conformance(session: nox.Session) -> None:
    """Run every case on the chosen torch and every available device; write the results and your report.

    The results go to results/results.jsonl, the report (index.html, compat.md, issue drafts,
    reproducers) to results/report/; the rest of the posargs to `torch-conformance run`."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [RUN OPTIONS]  (the report goes to results/report/)",
                  ["conformance", "run"])
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".")
    install_torch(session, choice)
    if not any(a == "-n" or a.startswith("-n") for a in rest):
        rest = ["-n", "auto", *rest]
    args = report_args(rest)
    results = Path(args[1])
    manifest = results.with_name(results.stem + ".manifest.json")
    started = time.time()
    try:
        session.run("torch-conformance", "run", "-q", *rest)
    finally:  # the report shows a failed run too; the run's exit status stays the session's
        if manifest.is_file() and manifest.stat().st_mtime >= started - 1:
            # the report's own last lines say where its page, compat.md, issue drafts and reproducers are
            session.run("torch-conformance", *args)
            session.log(f"results: {results} (one JSON record per item; the report above is rendered from it)")
        else:
            session.log(f"the run selected no item: {results} and the report were left as they were")


def matrix_choices(choice: str, session: nox.Session | None = None) -> list[str]:
    """The builds of `--torch LIST` (comma-separated choices) or `--torch releases`: every release
    since 2.10 that the index offers (scripts/torch_releases.py), plus nightly when its index is set."""
    if choice != "releases":
        choices = [c for c in choice.split(",") if c]
        for c in choices:
            torch_install_args(c, os.environ.get(NIGHTLY_ENV))  # a bad choice fails before any install
        return choices
    args = [sys.executable, str(ROOT / "scripts" / "torch_releases.py"), "--plain"]
    if os.environ.get(NIGHTLY_ENV):
        args.append("--nightly")
    out = subprocess.run(args, capture_output=True, text=True, check=False)  # noqa: S603  # our own script
    if out.returncode != 0:
        raise ChoiceError(f"--torch releases: could not list the index's releases: {out.stderr.strip()[-500:]}")
    return out.stdout.split()


def results_current(path: Path, cases: Path = ROOT / "cases") -> bool:
    """Whether a build's results file covers every case file as it is now: its run finished with a
    record for every item it planned, each case file under `cases` (the loader's NOT_CASES aside)
    that has records was run as it is now (sha256), and none without records is newer than the run."""
    try:
        ran: dict[str, set[str]] = {}
        done: set[tuple[str, str]] = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            ran.setdefault(str(rec.get("case_file")), set()).add(str(rec.get("case_sha256")))
            done.add((str(rec.get("case_id")), str(rec.get("variant"))))
        manifest = json.loads(path.with_name(path.stem + ".manifest.json").read_text(encoding="utf-8"))
        planned = {(str(i["case_id"]), str(i["variant"])) for i in manifest["items"]}
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not manifest.get("finished") or not planned <= done:
        return False
    try:
        started = datetime.fromisoformat(str(manifest["started"])).timestamp()
    except (KeyError, ValueError):
        return False
    for case in sorted(p for suffix in (".yaml", ".yml") for p in cases.rglob(f"*{suffix}")):
        if case.name == "UPSTREAM.yaml":  # conformance.data.loader.NOT_CASES (nox's Python may not have the package)
            continue
        hashes = ran.get(case.relative_to(cases.parent).as_posix())
        if hashes is None:  # not selected (e.g. a CUDA-only case under --devices cpu), unless new since the run
            if case.stat().st_mtime >= started:
                return False
        elif hashes != {hashlib.sha256(case.read_bytes()).hexdigest()}:
            return False
    return True


MATRIX_USAGE = """[--torch LIST|releases] [-o DIR] [--no-bench] [--resume] [RUN OPTIONS]

  --torch LIST      comma-separated choices (2.10.0,2.11.0,2.15.0), or `releases` (the default): every
                    release since 2.10 the index offers, plus nightly when its index is set
  -o DIR            the report folder (default: reports/releases, the published matrix)
  --no-bench        leave out the bench
  --resume          keep a build's results where they are current (every case file as it ran): an
                    interrupted matrix goes on where it stopped
  The rest goes to `torch-conformance run` (its options below). Each build's choice is one of:"""


@nox.session
def matrix(session: nox.Session) -> None:
    """Run every case and the bench on several builds, merged into one report (reports/releases/).

    `-- --torch 2.10.0,2.11.0,2.15.0` or `-- --torch releases` (every release since 2.10 the index
    offers, plus nightly when TORCH_CONFORMANCE_NIGHTLY_INDEX is set), each build from its own
    environment under .nox/_torch (reused); `-o DIR` for the report folder (default reports/releases:
    the published matrix; `conformance` writes results/report/); `--no-bench` leaves out the bench;
    `--resume` keeps a build's results where they are current (see results_current: an interrupted
    matrix goes on where it stopped); the rest goes to `torch-conformance run`."""
    if wants_help(list(session.posargs)):
        show_help(session, MATRIX_USAGE, ["conformance", "run"])
        return
    try:
        choice, rest = split_torch_arg(list(session.posargs))
    except ChoiceError as exc:
        session.error(str(exc))
    out = _option_value(rest, "-o") or "reports/releases"
    rest = [a for i, a in enumerate(rest) if a != "-o" and (i == 0 or rest[i - 1] != "-o")]
    bench = "--no-bench" not in rest
    resume = "--resume" in rest
    rest = [a for a in rest if a not in ("--no-bench", "--resume")]
    try:
        choices = matrix_choices("releases" if choice == "auto" else choice, session)
    except ChoiceError as exc:
        session.error(str(exc))
    session.install("-e", ".")
    if not any(a == "-n" or a.startswith("-n") for a in rest):
        rest = ["-n", "auto", *rest]
    results: list[str] = []
    for c in choices:
        install_torch(session, c)  # the session's path now leads to this choice's environment
        path = Path("results") / "matrix" / torch_env_dir(c).name / "results.jsonl"
        if resume and results_current(path):
            session.log(f"matrix: build {c}: {path} is current (every case file as it ran), kept (--resume)")
            results.append(str(path))
            continue
        started = time.time()
        session.log(f"matrix: build {c} ({len(results) + 1} of {len(choices)})")
        # a build's failures are the report's content, not the matrix's failure
        session.run("torch-conformance", "run", "-q", "--results", str(path), *rest, success_codes=[0, 1])
        if path.is_file() and path.stat().st_mtime >= started - 1:
            results.append(str(path))
    benches: list[str] = []
    for c in choices if bench else []:  # after every build's cases: each bench alone on the machine
        install_torch(session, c)
        doc = Path("results") / "matrix" / torch_env_dir(c).name / "bench" / "bench.json"
        started = time.time()
        session.run("torch-conformance", "bench", "--out", str(doc.parent), success_codes=[0, 1, 2])
        if doc.is_file() and doc.stat().st_mtime >= started - 1:
            benches.append(str(doc))
        else:
            session.warn(f"matrix: the bench of {c} wrote no {doc}; the report's speed section leaves it out")
    if not results:
        session.error("matrix: no build produced results")
    extra = ["--bench", ",".join(benches)] if benches else []
    session.run("torch-conformance", "report", *results, "-o", out, "--exit-zero", "--publish", *extra)


@nox.session
def report(session: nox.Session) -> None:
    """Render a report folder from results files, or compare two runs (`-- diff A B`); no torch needed.

    `-- RESULTS... [-o DIR]`: the results files (default results/results.jsonl) and the folder
    (default results/report/, as `conformance` writes it; reports/ holds the published ones)."""
    args = list(session.posargs) or ["results/results.jsonl"]
    if args[0] != "diff" and not any(a.startswith(("-o", "--output")) for a in args):
        args += ["-o", USER_REPORT]
    session.install("-e", ".")
    # `python -m conformance.report` is `torch-conformance report` without the rest of the CLI
    session.run("python", "-m", "conformance.report", *args)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the harness's own tests, every one, against the chosen torch.

    `-- -m "not slow"` leaves out the inductor-heavy ones, `-- --hypothesis-profile thorough` goes
    deeper; the rest of the posargs goes to pytest."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [PYTEST OPTIONS]", ["pytest"], ".[test]")
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".[test]")
    install_torch(session, choice)
    if not any(a == "-n" or a.startswith("-n") for a in rest):
        rest = ["-n", "auto", *rest]
    session.run("pytest", "-p", "no:cacheprovider", *rest)


@nox.session
def selftest(session: nox.Session) -> None:
    """Run the cases against seeded faults and report which cases kill each (`-- --fast`: a small subset)."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [SELFTEST OPTIONS]", ["conformance", "selftest"])
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".")
    install_torch(session, choice)
    session.run("torch-conformance", "selftest", *rest)


@nox.session
def explore(session: nox.Session) -> None:
    """Generate programs, run them eagerly and compiled, and write the findings (results/explore/).

    `-- --time-budget 600`, `-- --backends none` (the control), `-- --fault NAME` (the explorer
    checking itself); the findings are in results/explore/findings.md."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [EXPLORE OPTIONS]", ["conformance", "explore"])
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".")
    install_torch(session, choice)
    # findings are the session's output, not its failure (exit 1 says some were written)
    session.run("torch-conformance", "explore", *rest, success_codes=[0, 1])


@nox.session
def bench(session: nox.Session) -> None:
    """Time the chosen torch's per-call costs beside the published figures (results/bench/).

    `-- harness` for the harness's own cost, `-- compare A.json B.json` for two builds."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [BENCH OPTIONS]", ["conformance", "bench"])
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".[bench]")
    install_torch(session, choice)
    session.run("torch-conformance", "bench", *rest)


@nox.session
def lint(session: nox.Session) -> None:
    """Run ruff over the repository."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Run mypy --strict, with the chosen torch for its types (as in the other sessions)."""
    if wants_help(list(session.posargs)):
        show_help(session, "[--torch CHOICE] [MYPY OPTIONS]", ["mypy"], ".[typecheck]")
        return
    choice, rest = torch_choice(session)
    session.install("-e", ".[typecheck]")
    install_torch(session, choice)
    session.run("mypy", *rest)


@nox.session(reuse_venv="no")
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel, check them, and run the wheel without a checkout.

    `python -m build` and `twine check`; then a fresh environment with only the wheel and the chosen
    torch (default the CI pin, 2.13.0) runs scripts/check_package.py from an empty folder: the
    bundled corpus is listed, run and reported, with the same ids and digest as the checkout's."""
    choice, rest = torch_choice(session)
    if not os.environ.get(TORCH_ENV) and not any(a.startswith("--torch") for a in session.posargs):
        choice = "2.13.0"  # the CI pin: a CPU build, seconds to install
    session.install("build", "twine")
    dist = Path(session.create_tmp()) / "dist"
    session.run("python", "-m", "build", "--outdir", str(dist), ".")
    built = sorted(str(p) for p in dist.iterdir())
    session.run("twine", "check", "--strict", *built)
    for path in built:
        session.log(f"{Path(path).name}: {Path(path).stat().st_size / 1e6:.2f} MB")
    wheel = next(p for p in built if p.endswith(".whl"))
    env = Path(session.create_tmp()) / "wheel-env"
    session.run(sys.executable, "-m", "venv", "--clear", str(env), external=True)
    python = str(env / "bin" / "python")
    session.run(python, "-m", "pip", "install", "--disable-pip-version-check", "-q", wheel, external=True)
    args = torch_install_args(choice, os.environ.get(NIGHTLY_ENV))
    site = calling_torch_site(os.environ.get(PYTHON_ENV) or sys.executable) if args is None else \
        _torch_env(session, choice, args)
    if site is None:
        session.error(f"--torch {choice}: no torch to test; pick a version, e.g. --torch 2.13.0")
    Path(_site(Path(python))).joinpath("torch_conformance_torch.pth").write_text(site + "\n")
    session.run(python, str(ROOT / "scripts" / "check_package.py"), "--checkout-cases", str(ROOT / "cases"),
                *rest, external=True)
