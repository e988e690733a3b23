"""The entry points upstream's own tests call besides torch.compile and aot_function.

Note [Module entry points]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``aot_module_simplified`` and ``aot_module`` compile a *module*: its parameters and buffers become
graph inputs, lifted in front of the call's tensors. A case's program is a function whose module
arguments are inputs, so the entry compiles the program as a module (:class:`_ProgramModule`) whose
submodules are the first call's module arguments (the caller's own objects: whatever the call does
to their parameters and buffers, it does to the caller's) and whose forward takes the tensors. A
later call must pass the same modules (upstream compiles one module once).

* ``aot_module_simplified`` traces at once, from the first call's inputs, and has no guards: later
  calls run the same graph, as upstream's do. Its graph must return a tuple; a program that returns
  one value is wrapped and unwrapped around it (the only adaptation). What it returns is its own
  (a list), compared under the flat-list allowance aot_function has.
* ``aot_module`` (functorch.compile) wraps the module; it traces on its first call, with symbolic sizes where the
  case's ``dynamic`` is true (its ``dynamic=``, as aot_function's).
* ``make_fx`` traces the program with fake tensors (the real inputs are not touched while tracing),
  and the variant calls the traced graph. No AOTAutograd runs, so nothing is generated but the graph
  itself, which the capture keeps as ``make_fx_graph`` (its ``gm.code``, what upstream asserts on).
  The case's ``tracing_mode`` picks fake (the default), symbolic or real tracing. A module argument is
  traced as the program's submodule with its real parameters (``_allow_non_fake_inputs=True``, as
  upstream traces a module with real weights).
* ``aot_module_simplified`` traces the call's own tensors; with ``tracing_mode: fake`` fake copies of
  them, and with ``symbolic`` fake copies with symbolic sizes under a ShapeEnv, whose guards are kept as
  ``shape_env_guards`` (what upstream's ``shape_env.format_guards()`` shows).
* ``aot_export_module`` (``trace_joint=False``; ``pre_dispatch`` as the case's compile option says)
  exports the program as a module once, from the first call's inputs, and the variant runs the exported
  graph as an exporter's caller must: parameters and buffers passed in front of the tensors, then each
  mutation the graph signature names (a buffer's, an input's) copied back into its target, the user
  outputs returned in the program's structure. The harness applies no other epilogue, so a mutation
  the export dropped, or one it names on the wrong target, shows against eager. The graph is kept as
  ``aot_export_graph`` (its ``gm.code``), and its readable form with the subgraphs of cond and map as
  ``aot_export_readable`` (``print_readable(expanded_def=True)``), and each subgraph's own code as
  ``aot_export_graph.<module path>`` (``aot_export_graph.true_graph_0``); ``str(gm.graph)`` as
  ``aot_export_graph_str`` and the graph signature's maps as ``aot_export_signature``, a ``field: value`` line each
  (what upstream reads off ``sig``). Effect tokens are refused (the graph would need them threaded).
* ``aot_export_joint_simple`` (``trace_joint=False``) exports the program, a function of tensors returning a
  tuple, once from the first call's tensors; the variant calls the exported graph, which is kept as
  ``aot_export_graph`` (and ``aot_export_graph_str``) too. What it refuses (input mutations, aliased outputs) is
  the compiled side's error.

With ``compile: {module: NAME}`` the entry compiles that module argument itself, as upstream compiles its module
(the program is that module's call; :class:`_GivenModule`): its own parameter and buffer names, its own output
(aot_module_simplified and aot_export_module then need the tuple its forward returns, as upstream's do).

Every entry counts one compile per graph its forward compiler is handed (make_fx: per trace).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._pytree import tree_unflatten

from conformance.core.entry import (
    AOT_EXPORT_JOINT_SIMPLE,
    AOT_EXPORT_MODULE,
    AOT_MODULE,
    AOT_MODULE_SIMPLIFIED,
    MAKE_FX,
)
from conformance.core.mismatch import CaseBroken, FeatureUnavailable
from conformance.core.spec import CompileData

__all__ = ["module_entry"]

MAKE_FX_GRAPH = "make_fx_graph"
SHAPE_ENV_GUARDS = "shape_env_guards"
TracingMode = Literal["real", "fake", "symbolic"]
AOT_EXPORT_GRAPH = "aot_export_graph"
AOT_EXPORT_READABLE = "aot_export_readable"  # print_readable(expanded_def=True): the subgraphs (cond, map) too
AOT_EXPORT_GRAPH_STR = "aot_export_graph_str"  # str(gm.graph), the form some upstream tests pin
AOT_EXPORT_SIGNATURE = "aot_export_signature"  # the graph signature's maps, a line each: `name: value`
# what upstream's tests read off an export's GraphSignature (sig.user_inputs_to_mutate == {...}, 'foo' in sig.buffers)
_SIGNATURE_FIELDS = ("parameters", "buffers", "user_inputs", "user_outputs", "inputs_to_parameters",
                     "inputs_to_buffers", "buffers_to_mutate", "parameters_to_mutate", "user_inputs_to_mutate")
# The traced graph goes out as a record the capture reads (conformance/probe/capture.py), as torch's own
# graphs do: the core knows nothing of who listens.
TRACED_GRAPH_LOG = logging.getLogger(__name__)
TRACED_GRAPH_MESSAGE = "Traced %s:\n%s"


class _ProgramModule(torch.nn.Module):
    """The program as a module (Note [Module entry points])."""

    @property
    def target(self) -> torch.nn.Module:
        """What the entry compiles."""
        return self

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], wrap_single: bool) -> None:
        super().__init__()
        self.fn = fn
        self.slots = tuple(isinstance(a, torch.nn.Module) for a in args)
        self.bound = torch.nn.ModuleList([a for a in args if isinstance(a, torch.nn.Module)])
        self.wrap_single = wrap_single
        self.single = False

    def forward(self, *tensors: Any) -> Any:
        values, modules = iter(tensors), iter(self.bound)
        out = self.fn(*(next(modules) if m else next(values) for m in self.slots))
        if self.wrap_single and not isinstance(out, tuple):
            self.single = True
            return (out,)
        return out

    def split(self, args: tuple[Any, ...], entry: str) -> tuple[Any, ...]:
        """The call's non-module arguments, after checking its modules are the bound ones."""
        if tuple(isinstance(a, torch.nn.Module) for a in args) != self.slots or any(
                a is not b for a, b in zip((a for a in args if isinstance(a, torch.nn.Module)), self.bound,
                                           strict=True)):
            raise CaseBroken(f"{entry} compiles the first call's modules: a later call must pass the same ones")
        return tuple(a for a in args if not isinstance(a, torch.nn.Module))


class _GivenModule:
    """A module argument the entry compiles itself (`compile.module`), and the call's other arguments."""

    def __init__(self, args: tuple[Any, ...], at: int) -> None:
        module = args[at]
        if not isinstance(module, torch.nn.Module):
            raise CaseBroken(f"compile.module names argument {at}, a {type(module).__name__}, not a module")
        self.target: torch.nn.Module = module
        self.at = at
        self.bound = (module,)
        self.single = False

    def split(self, args: tuple[Any, ...], entry: str) -> tuple[Any, ...]:
        if args[self.at] is not self.target:
            raise CaseBroken(f"{entry} compiles the first call's module: a later call must pass the same one")
        return (*args[:self.at], *args[self.at + 1:])


def _program(fn: Callable[..., Any], args: tuple[Any, ...], wrap_single: bool,
             at: int | None) -> _ProgramModule | _GivenModule:
    return _ProgramModule(fn, args, wrap_single) if at is None else _GivenModule(args, at)


def _entry_tensors_only(args: tuple[Any, ...], entry: str) -> None:
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise CaseBroken(f"{entry} takes tensors (and modules, bound as the compiled module's submodules); "
                             f"argument {i} is {type(a).__name__}")


def _traced_from(tensors: tuple[Any, ...], tracing: TracingMode | None) -> tuple[list[Any], Any]:
    """What an entry traces from (Note [Module entry points]): the call's own tensors, fake copies, or fake
    copies with symbolic sizes under a ShapeEnv; and that ShapeEnv (None where there is none)."""
    if tracing in (None, "real"):
        return list(tensors), None
    from torch.fx.experimental.symbolic_shapes import ShapeEnv  # lazy: start-up

    shape_env = ShapeEnv() if tracing == "symbolic" else None
    mode = FakeTensorMode(shape_env=shape_env)
    return [mode.from_tensor(t) for t in tensors], shape_env


def _aot_module_simplified_entry(fn: Callable[..., Any], fw: Callable[..., Any], bw: Callable[..., Any], kiim: bool,
                                 tracing: TracingMode | None, *, at: int | None) -> Callable[..., Any]:
    try:
        from torch._functorch.aot_autograd import aot_module_simplified  # guarded: a build without it
    except ImportError as exc:
        raise FeatureUnavailable(f"aot_module_simplified is not available: {exc}") from None
    state: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        if "program" not in state:
            program = _program(fn, args, True, at)
            tensors = program.split(args, AOT_MODULE_SIMPLIFIED)
            _entry_tensors_only(tensors, AOT_MODULE_SIMPLIFIED)
            traced, shape_env = _traced_from(tensors, tracing)
            # any module whose forward returns a tuple, as upstream's tests pass one
            state["compiled"] = aot_module_simplified(
                program.target, traced, fw_compiler=fw, bw_compiler=bw,  # type: ignore[arg-type]
                keep_inference_input_mutations=kiim)
            if shape_env is not None:
                TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, SHAPE_ENV_GUARDS, shape_env.format_guards())
            state["program"] = program
        program = state["program"]
        out = state["compiled"](*program.split(args, AOT_MODULE_SIMPLIFIED))
        return out[0] if program.single else out

    return call


def _aot_module_entry(fn: Callable[..., Any], fw: Callable[..., Any], bw: Callable[..., Any], kiim: bool,
                      *, at: int | None, dynamic: bool) -> Callable[..., Any]:
    try:
        from functorch.compile import (  # type: ignore[attr-defined]  # re-exported without __all__
            aot_module,  # guarded: a build without it
        )
    except ImportError as exc:
        raise FeatureUnavailable(f"functorch.compile.aot_module is not available: {exc}") from None
    state: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        if "program" not in state:
            state["program"] = _program(fn, args, False, at)
            state["compiled"] = aot_module(state["program"].target, fw_compiler=fw, bw_compiler=bw,
                                           keep_inference_input_mutations=kiim, dynamic=dynamic)
        return state["compiled"](*state["program"].split(args, AOT_MODULE))

    return call


def _make_fx_entry(fn: Callable[..., Any], counter: Callable[..., Any], tracing: TracingMode | None,
                   at: int | None) -> Callable[..., Any]:
    try:
        from torch.fx.experimental.proxy_tensor import make_fx  # guarded: a build without it
    except ImportError as exc:
        raise FeatureUnavailable(f"make_fx is not available: {exc}") from None
    state: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        if "gm" not in state:
            program = _program(fn, args, False, at)
            tensors = program.split(args, MAKE_FX)
            traced = program.target if program.bound else fn  # a module argument's real weights, as upstream's
            gm = make_fx(traced, tracing_mode=tracing or "fake", _allow_non_fake_inputs=bool(program.bound))(*tensors)
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, MAKE_FX_GRAPH, gm.code)
            state.update(gm=counter(gm, list(tensors)), program=program)
        return state["gm"](*state["program"].split(args, MAKE_FX))

    return call


def _run_exported(gm: Callable[..., Any], graph: torch.fx.Graph, sig: Any, program: torch.nn.Module,
                  tensors: tuple[Any, ...]) -> Any:
    """The exported graph called, and its signature's mutations applied (Note [Module entry points])."""
    lifted = [*(program.get_parameter(n) for n in sig.parameters), *(program.get_buffer(n) for n in sig.buffers)]
    outs = gm(*lifted, *tensors)
    user_inputs = {name: tensors[i] for i, name in enumerate(sig.user_inputs)}
    mutated = {**{k: program.get_buffer(v) for k, v in sig.buffers_to_mutate.items()},
               **{k: program.get_parameter(v) for k, v in getattr(sig, "parameters_to_mutate", {}).items()},
               **{k: user_inputs[v] for k, v in sig.user_inputs_to_mutate.items()}}
    (output,) = (n for n in graph.nodes if n.op == "output")
    names = [getattr(n, "name", None) for n in output.args[0]]
    _write_back({mutated[str(name)]: value for name, value in zip(names, outs[:len(mutated)], strict=False)})
    return tree_unflatten(list(outs[len(mutated):]), sig.out_spec)


def _write_back(targets: dict[torch.Tensor, torch.Tensor]) -> None:
    """Each mutated tensor's new value copied into it, as an exporter's caller must."""
    for target, value in targets.items():
        target.copy_(value)


def _signature_text(sig: Any) -> str:
    """An export's graph signature as `field: repr(value)` lines, the fields a build's signature has."""
    return "\n".join(f"{name}: {getattr(sig, name)!r}" for name in _SIGNATURE_FIELDS if hasattr(sig, name))


def _log_readable(gm: torch.fx.GraphModule) -> None:
    for name, sub in gm.named_modules():  # each subgraph's own code, as upstream reads gm.true_graph_0.code
        if name and isinstance(sub, torch.fx.GraphModule):
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, f"{AOT_EXPORT_GRAPH}.{name}", sub.code)
    try:
        readable = gm.print_readable(print_output=False, expanded_def=True)
    except TypeError:  # a build whose print_readable has no expanded_def: the artifact is not observable there
        return
    TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_READABLE, readable)


def _aot_export_module_entry(fn: Callable[..., Any], counter: Callable[..., Any], pre_dispatch: bool,
                             at: int | None) -> Callable[..., Any]:
    try:
        from torch._functorch.aot_autograd import aot_export_module  # guarded: a build without it
    except ImportError as exc:
        raise FeatureUnavailable(f"aot_export_module is not available: {exc}") from None
    state: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        if "program" not in state:
            program = _program(fn, args, True, at)
            tensors = program.split(args, AOT_EXPORT_MODULE)
            _entry_tensors_only(tensors, AOT_EXPORT_MODULE)
            gm, sig = aot_export_module(program.target, list(tensors), trace_joint=False, pre_dispatch=pre_dispatch)
            if getattr(sig, "input_tokens", None) or getattr(sig, "output_tokens", None):
                raise CaseBroken("aot_export_module gave a graph with effect tokens, which the entry does not thread")
            assert isinstance(gm, torch.fx.GraphModule)  # what aot_export_module returns
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_GRAPH, gm.code)
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_GRAPH_STR, str(gm.graph))
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_SIGNATURE, _signature_text(sig))
            _log_readable(gm)
            state.update(program=program, run=counter(gm, list(tensors)), graph=gm.graph, sig=sig)
        program = state["program"]
        out = _run_exported(state["run"], state["graph"], state["sig"], program.target,
                            program.split(args, AOT_EXPORT_MODULE))
        return out[0] if program.single else out

    return call


def _aot_export_joint_simple_entry(fn: Callable[..., Any], counter: Callable[..., Any]) -> Callable[..., Any]:
    try:
        from torch._functorch.aot_autograd import aot_export_joint_simple  # guarded: a build without it
    except ImportError as exc:
        raise FeatureUnavailable(f"aot_export_joint_simple is not available: {exc}") from None
    state: dict[str, Any] = {}

    def call(*args: Any) -> Any:
        _entry_tensors_only(args, AOT_EXPORT_JOINT_SIMPLE)
        if "gm" not in state:
            gm = aot_export_joint_simple(fn, args, trace_joint=False)
            assert isinstance(gm, torch.fx.GraphModule)  # what aot_export_joint_simple returns
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_GRAPH, gm.code)
            TRACED_GRAPH_LOG.debug(TRACED_GRAPH_MESSAGE, AOT_EXPORT_GRAPH_STR, str(gm.graph))
            state["gm"] = counter(gm, list(args))
        return state["gm"](*args)

    return call


def module_entry(entry: str, fn: Callable[..., Any], counter: Callable[..., Any], kiim: bool,
                 options: CompileData, *, at: int | None, bw: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` behind one of the entries of Note [Module entry points]; `counter` is the forward compiler and `bw` the
    backward's (the case's forward compiler, uncounted, as upstream's entries default it; else nop); `options` the
    case's compile options; `at` the position of the module argument it compiles itself (`compile.module`), or
    None."""
    pre_dispatch, tracing = options["pre_dispatch"], options["tracing_mode"]

    if entry == AOT_EXPORT_MODULE:
        return _aot_export_module_entry(fn, counter, pre_dispatch, at)
    if entry == AOT_EXPORT_JOINT_SIMPLE:
        return _aot_export_joint_simple_entry(fn, counter)

    if entry == AOT_MODULE_SIMPLIFIED:
        return _aot_module_simplified_entry(fn, counter, bw, kiim, tracing, at=at)
    if entry == AOT_MODULE:
        return _aot_module_entry(fn, counter, bw, kiim, at=at, dynamic=bool(options["dynamic"]))
    if entry == MAKE_FX:
        return _make_fx_entry(fn, counter, tracing, at)
    raise ValueError(f"no module entry {entry!r}")
