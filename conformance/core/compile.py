"""The program as a function, compiled the way the variant says, in an isolated config.

Note [Isolation between cases]
Every variant starts from `torch._dynamo.reset()` inside its own ExitStack of config patches
and grad-mode restore, and resets dynamo again on the way out, so neither compiled frames nor
config overrides survive into the next case — whatever the program did, and also when the
variant raised or timed out (the stack unwinds on BaseException too).

Note [Cold and warm passes]
The on-disk compile caches (inductor's FX graph cache, AOTAutograd's cache, triton's) outlive
processes, so a "cold" pass would hit whatever an earlier run left. A warm-rerun case gets
empty cache folders of its own for its cold pass, kept for its warm pass, then removed. Other
cases share the default caches (speed), but each item compiles under a cache-key tag of its own
(torch.compiler.config.cache_key_tag: the case data, program, device, backend and mode), so that
no item is handed an artifact another item compiled: AOTAutograd's key leaves out how the inputs
alias, and two programs alike but for an input's offset shared one compiled wrapper, so the
verdict depended on which item a worker had run first. An item's own recompiles, and a later
run of the same item, still hit the caches.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import importlib
import importlib.util
import json
import linecache
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from conformance.core.entries import module_entry
from conformance.core.entry import (
    AOT_EXPORT_JOINT_SIMPLE,
    AOT_EXPORT_MODULE,
    AOT_FUNCTION,
    AOT_MODULE,
    AOT_MODULE_SIMPLIFIED,
    MAKE_FX,
    NONE,
)
from conformance.core.mismatch import CaseBroken, FeatureUnavailable
from conformance.core.spec import CaseData, CompileData

CLOSURE_MAKER = "make_closure"  # what runs the program when it closes over names (make_function)


def make_function(program: str, name: str, filename: str, classes: dict[str, Any] | None = None,
                  closure: Sequence[str] = ()) -> Callable[..., Any]:
    """A fresh function object from the program, with the case's classes in its globals. The
    source is registered with linecache under a name of its own: dynamo and tracebacks read
    source lines, and a case file is not Python. `closure` (compile.closure): classes-block names the function
    closes over instead, as upstream's function or lambda closes over its test's locals (dynamo then reads them
    from closure cells, not globals): the program runs inside a maker that takes them as parameters."""
    linecache.cache[filename] = (len(program), None, program.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"torch": torch, **(classes or {}), "__name__": "torch_conformance_case"}
    if not closure:
        exec(compile(program, filename, "exec"), namespace)
        fn: Callable[..., Any] = namespace[name]
        return fn
    tree = ast.parse(program, filename)
    maker = ast.FunctionDef(name=CLOSURE_MAKER, args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in closure],
                                                                   kwonlyargs=[], kw_defaults=[], defaults=[]),
                            body=[*tree.body, ast.Return(ast.Name(name, ast.Load()))], decorator_list=[])
    ast.copy_location(maker, tree.body[0])
    exec(compile(ast.fix_missing_locations(ast.Module([maker], type_ignores=[])), filename, "exec"), namespace)
    made: Callable[..., Any] = namespace[CLOSURE_MAKER](*(namespace[n] for n in closure))
    return made


class CountingBackend:
    """A backend wrapper that counts the graphs the backend it wraps compiled: `count`, those whose
    compile returned (what dynamo can install), and `backend_calls`, every graph it was handed. They
    differ where a compile was aborted and retried: dynamo's tensorify restart (a float it tried to
    make a tensor must stay a Python float after all) raises out of the backend and traces the frame
    again, which is no recompile."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner
        self.count = 0
        self.backend_calls = 0
        # what dynamo names the backend in its errors ("backend='inductor' raised: ..."): the user's
        # choice, never this wrapper's repr
        self.__name__ = str(getattr(inner, "__name__", type(inner).__name__))

    def __repr__(self) -> str:
        return self.__name__

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.backend_calls += 1
        compiled = self.inner(gm, example_inputs, **kwargs)
        self.count += 1
        return compiled


# Backends torch registers whatever is installed, which import a package of their own when they
# compile: without it they raise (an ImportError wrapped in BackendCompilerFailed), which is no
# verdict on the build. Vendors' backends register only where their package is installed.
BACKEND_PACKAGES = {"tvm": ("tvm", "apache-tvm"), "openxla": ("torch_xla", "torch_xla"),
                    "openxla_eval": ("torch_xla", "torch_xla"), "onnxrt": ("onnxruntime", "onnxruntime")}


def backend_missing(name: str) -> str | None:
    """Why a registered backend cannot compile here (a package it imports is absent), or None."""
    module, package = BACKEND_PACKAGES.get(name, (None, ""))
    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return f"backend {name!r} needs the {package} package, which is not installed here (no module {module!r})"


def lookup_backend(name: str) -> Callable[..., Any]:
    """A torch.compile backend by its registered name; FeatureUnavailable if this build has none
    or it cannot run here."""
    import torch._dynamo  # lazy: start-up

    missing = backend_missing(name)
    if missing is not None:
        raise FeatureUnavailable(missing)

    lookup: Callable[[str], Callable[..., Any]] | None = getattr(torch._dynamo, "lookup_backend", None)
    if lookup is None:
        from torch._dynamo.backends.registry import lookup_backend  # lazy: start-up

        lookup = lookup_backend
    try:
        return lookup(name)
    except Exception as exc:  # an unknown name raises InvalidBackend, whose module moved between releases
        raise FeatureUnavailable(f"backend {name!r} is not registered on this build ({exc})") from None


TRACING_ENTRIES = (MAKE_FX, AOT_EXPORT_MODULE, AOT_EXPORT_JOINT_SIMPLE)  # a graph traced, then called as it is


def make_compiled(
    fn: Callable[..., Any],
    case: CaseData,
    backend: str,
    kiim: bool,
    counting: Callable[[Callable[..., Any], bool], CountingBackend] = lambda inner, _aot: CountingBackend(inner),
) -> tuple[Callable[..., Any], CountingBackend]:
    """`fn` compiled with the variant's entry point; `counting(inner, aot)` wraps the backend."""
    options = case["compile"]
    if backend == NONE:
        return fn, counting(lambda gm, _example_inputs, **_kw: gm, False)
    if backend == AOT_FUNCTION:
        try:
            from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
                aot_function,  # guarded: a build without it
                nop,
            )
        except ImportError as exc:
            raise FeatureUnavailable(f"functorch.compile.aot_function is not available: {exc}") from None
        counter = counting(fw_compiler(fn, options, nop), True)
        # no bw_compiler given, upstream's aot_function compiles the backward with its forward compiler too
        compiled = aot_function(fn, fw_compiler=counter, bw_compiler=fw_compiler(fn, options, nop),
                                keep_inference_input_mutations=kiim,
                                dynamic=bool(options["dynamic"]), **_resolved(aot_function_options(options)))
        return compiled, counter
    if backend in (AOT_MODULE_SIMPLIFIED, AOT_MODULE, *TRACING_ENTRIES):
        from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
            nop,  # lazy: start-up
        )

        counter = counting(fw_compiler(fn, options, nop) if backend not in TRACING_ENTRIES else lambda gm, _args: gm,
                           True)
        return module_entry(backend, fn, counter, kiim, options, at=module_at(case),
                            bw=fw_compiler(fn, options, nop)), counter
    counter = counting(lookup_backend(backend), False)
    counter.__name__ = backend
    at = module_at(case)
    if at is not None:
        return _compiled_module(at, lambda module: torch.compile(
            module, backend=counter, dynamic=options["dynamic"], fullgraph=options["fullgraph"])), counter
    return torch.compile(fn, backend=counter, dynamic=options["dynamic"], fullgraph=options["fullgraph"]), counter


def fw_compiler(fn: Callable[..., Any], options: CompileData, default: Callable[..., Any]) -> Callable[..., Any]:
    """The entry's forward compiler: the case's own (`compile.fw_compiler`, a name the classes block binds, which the
    program's globals hold), else `default`."""
    name = options["fw_compiler"]
    if name is None:
        return default
    found: Callable[..., Any] = fn.__globals__[name]

    def installed(gm: Any, example_inputs: Any) -> Callable[..., Any]:
        """The case's compiler. An assertion it makes on the graph it is handed is upstream's check of the build
        (its AssertionError is the compiled side's); any other failure is the case's, never the build's."""
        try:
            made = found(gm, example_inputs)
        except AssertionError:
            raise
        except Exception as exc:
            raise CaseBroken(f"compile.fw_compiler {name!r} raised {type(exc).__name__}: {exc}") from None
        if not callable(made):
            raise CaseBroken(f"compile.fw_compiler {name!r} returned {type(made).__name__}, not a callable")
        return made  # type: ignore[no-any-return]  # the case's own function: callable, checked above

    return installed


def module_at(case: CaseData) -> int | None:
    """The position among the program's arguments of the module the entry compiles itself (`compile.module`)."""
    name = case["compile"]["module"]
    if name is None:
        return None
    return [n for n, spec in case["inputs"].items() if not spec["hidden"]].index(name)


def _compiled_module(at: int, compile_module: Callable[[torch.nn.Module], Callable[..., Any]]) -> Callable[..., Any]:
    """torch.compile of the module argument itself, as upstream's `torch.compile(mod)`: compiled at the first call,
    called with the other arguments; a later call must pass the same module (it is the compiled one)."""
    made: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        module = args[at]
        if "module" not in made:
            made.update(module=module, compiled=compile_module(module))
        elif made["module"] is not module:
            raise CaseBroken("compile.module: torch.compile compiled the first call's module; a later call must "
                             "pass the same one (persist: true)")
        return made["compiled"](*args[:at], *args[at + 1:])

    return call


def split_config_key(key: str) -> tuple[str, str]:
    """A `config:` key as its module's name and the flag's: the module is everything up to the first
    segment named `config` or `_config` (torch._dynamo.config, torch.fx.experimental._config), the flag
    the rest (a nested one keeps its dots: triton.cudagraphs)."""
    found = re.match(r"^(.*?\._?config)\.(.+)$", key)
    if found is None:
        raise CaseBroken(f"{key!r} names no torch.<...>.config or torch.<...>._config module")
    return found[1], found[2]


def aot_function_options(options: CompileData) -> dict[str, str | bool]:
    """The case's aot_function options that differ from aot_function's defaults, as its keyword arguments:
    a value that is a name is the module attribute it names in full (the reproducer writes the same)."""
    chosen: dict[str, str | bool] = {}
    if options["partitioner"] == "min_cut":
        chosen["partition_fn"] = "functorch.compile.min_cut_rematerialization_partition"
    if options["decompositions"] != "none":
        chosen["decompositions"] = DECOMPOSITIONS[options["decompositions"]]
    if not options["functionalize"]:
        chosen["disable_functionalization"] = True
    return chosen


DECOMPOSITIONS = {"default": "functorch.compile.default_decompositions",
                  "inductor": "torch._inductor.decomposition.decompositions"}


def _resolved(chosen: dict[str, str | bool]) -> dict[str, Any]:
    def named(dotted: str) -> Any:
        module, _, attribute = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attribute)

    return {k: named(v) if isinstance(v, str) else v for k, v in chosen.items()}


def config_flag(key: str) -> tuple[Any, str]:
    """The config module and flag name a case's `config:` key names. FeatureUnavailable where this
    build lacks it (another release may have it), CaseBroken where the module is no torch config
    module (it cannot be patched on any build)."""
    module_name, flag = split_config_key(key)
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise FeatureUnavailable(f"no module {module_name} in this build (torch {torch.__version__})") from None
    flags = getattr(module, "get_config_copy", None)
    if not callable(flags) or not callable(getattr(module, "patch", None)):
        raise CaseBroken(f"{module_name} is not a torch config module (it has no patch()); name a flag of e.g. "
                         "torch._dynamo.config or torch._inductor.config")
    known = flags()
    if flag not in known:
        close = difflib.get_close_matches(flag, list(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise FeatureUnavailable(f"no such flag in this build (torch {torch.__version__}){hint}")
    return module, flag


def config_patches(case: CaseData, backend: str) -> list[tuple[Any, dict[str, Any]]]:
    """(config module, {name: value}) for the case's config and its inductor options and mode; a
    flag this build lacks skips the item (validate says so at its line, deep_check)."""
    patches: list[tuple[Any, dict[str, Any]]] = []
    for key, value in case["config"].items():
        try:
            module, flag = config_flag(key)
        except FeatureUnavailable as exc:
            raise FeatureUnavailable(f"config: {key}: {exc}") from None
        except CaseBroken as exc:
            raise CaseBroken(f"config: {key}: {exc}") from None
        patches.append((module, {flag: value}))
    options = case["compile"]
    if backend == "inductor" and (options["options"] or options["mode"]):
        import torch._inductor  # lazy: start-up
        import torch._inductor.config as inductor_config  # lazy: start-up

        chosen: dict[str, Any] = {}
        if options["mode"]:
            chosen.update(torch._inductor.list_mode_options(options["mode"], options["dynamic"]))
        chosen.update(options["options"])
        patches.append((inductor_config, chosen))
    return patches


@contextlib.contextmanager
def isolated(case: CaseData, backend: str) -> Iterator[None]:
    """See Note [Isolation between cases]."""
    import torch._dynamo  # lazy: start-up

    torch._dynamo.reset()
    grad = torch.is_grad_enabled()
    try:
        with contextlib.ExitStack() as stack:
            for module, patch in config_patches(case, backend):
                stack.enter_context(module.patch(patch))
            torch.manual_seed(case["seed"])
            yield
    finally:
        torch.set_grad_enabled(grad)
        torch._dynamo.reset()


@contextlib.contextmanager
def item_cache_key(*parts: object) -> Iterator[None]:
    """See Note [Cold and warm passes]; a build without the tag (before 2.6) shares its caches."""
    config = getattr(getattr(torch, "compiler", None), "config", None)
    if config is None or not hasattr(config, "cache_key_tag"):
        yield
        return
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()[:24]
    with config.patch(cache_key_tag=f"torch-conformance-{digest}"):
        yield


@contextlib.contextmanager
def fresh_compile_caches() -> Iterator[None]:
    """See Note [Cold and warm passes]."""
    names = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    saved = {n: os.environ.get(n) for n in names}
    with tempfile.TemporaryDirectory(prefix="torch-conformance-cold-") as tmp:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        try:
            yield
        finally:
            for n, v in saved.items():
                if v is None:
                    os.environ.pop(n, None)
                else:
                    os.environ[n] = v
