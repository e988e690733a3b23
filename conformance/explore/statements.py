"""The statements the explorer's programs are made of: the hand-written templates, the kinds each
belongs to (what it writes, which op family), the autograd Functions some apply, and what a caller
does between calls. Forms from torch's registry (registry.py) are drawn beside them, one kind per
family."""

from __future__ import annotations

from conformance.explore.registry import FAMILIES

# the autograd Functions the `fn_*` statements apply, as a case's classes block defines them
FUNCTIONS = """class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 + x * 0


class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2)

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""
FUNCTION_KINDS = frozenset({"fn_apply", "fn_inplace"})

# what the caller does around a later call (the case's `before` and `after`): writes to an input or to
# the previous call's output, a second backward, an optimizer step, gradients cleared
ACTIONS: dict[str, tuple[str, str]] = {
    "write_input": ("before", "with torch.no_grad():\n    {x}.mul_(0.5)"),
    "write_output": ("before", "with torch.no_grad():\n    for t in (out if isinstance(out, tuple) else (out,)):\n"
                               "        if isinstance(t, torch.Tensor):\n            t.add_(1)"),
    "second_backward": ("after", "for t in (out if isinstance(out, tuple) else (out,)):\n"
                                 "    if isinstance(t, torch.Tensor) and t.requires_grad:\n"
                                 "        t.sum().backward(retain_graph=True)"),
    "opt_step": ("after", "opt.step()"),
    "zero_grad": ("before", "{x}.grad = None"),
}


# statement templates: {t} target, {o} another tensor of the same shape, {out} a new variable
TEMPLATES: dict[str, str] = {
    # in-place data ops
    "mul_": "{t}.mul_(2)",
    "add_alpha": "{t}.add_({o}, alpha=0.5)",
    "copy_": "{t}.copy_({o})",
    "fill_": "{t}.fill_(1.5)",
    "zero_": "{t}.zero_()",
    "clamp_": "{t}.clamp_(min=-0.5, max=0.5)",
    "addcmul_": "{t}.addcmul_({o}, {o}, value=0.5)",
    "index_add_dup": "{t}.index_add_(0, torch.tensor([0, 0]), {o}[:2])",
    "detach_mul_": "{t}.detach().mul_(3)",
    # storage ops: onto a fresh tensor, and storage moving between inputs
    "set_": "{t}.set_({o}.detach().clone())",
    "data_assign": "{t}.data = {o} * 2",
    "set_other": "{t}.set_({o})",
    "data_other": "{t}.data = {o}",
    "data_op": "{t}.data.mul_(2)",
    # only onto a tensor of o's dtype: in a wider one, o's geometry reaches past the storage, which set_
    # then grows with memory nobody wrote (the control found two eager runs of such a program differ)
    "set_storage": "_ = {t}.set_({o}.untyped_storage(), {o}.storage_offset(), {o}.size(), {o}.stride()) "
                   "if {t}.dtype == {o}.dtype else None",
    # floats in every position: method, functional, keyword, unary, arithmetic on the float
    "mul_lr": "{t}.mul_(lr)",
    "mul_half_lr": "{t}.mul_(0.5 * lr)",
    "add_alpha_lr": "{t}.add_({o}, alpha=lr)",
    "div_pow_lr": "{t}.div_((1.0 + lr) ** 0.5)",
    "add_fn_lr": "{out} = torch.add({t}, {o}, alpha=lr)",
    "addcmul_fn_lr": "{out} = torch.addcmul({t}, {o}, {o}, value=lr)",
    "clamp_min_lr": "{out} = {t}.clamp_min(lr)",
    "leaky_lr": "{out} = torch.nn.functional.leaky_relu({t}, negative_slope=lr)",
    "full_like_lr": "{out} = torch.full_like({t}, lr)",
    "neg_lr": "{t}.add_(-lr)",
    "one_minus_lr": "{t}.mul_(1 - lr)",
    "square_lr": "{out} = {t} * lr ** 2",
    # in-place metadata ops, through the ATen overloads (dynamo graph-breaks on the methods)
    "t_": "torch.ops.aten.t_.default({t})",
    "unsqueeze_": "torch.ops.aten.unsqueeze_.default({t}, 0)",
    "transpose_": "torch.ops.aten.transpose_.default({t}, 0, -1)",
    "squeeze_": "torch.ops.aten.squeeze_.default({t})",
    "swapdims_": "torch.ops.aten.swapdims_.default({t}, 0, -1)",
    "as_strided_": "torch.ops.aten.as_strided_.default({t}, ({t}.numel(),), (1,), {t}.storage_offset())",
    "resize_": "{t}.resize_({t}.numel())",
    # a module's forward, and its parameter written in place
    "module_call": "{out} = {m}({t})",
    "module_param_mul_": "with torch.no_grad():\n        {m}.weight.mul_(0.5)",
    # an optimizer's step on the module's parameters (a gradient set by hand: no backward inside the program)
    "opt_step": "{m}.weight.grad = torch.ones_like({m}.weight)\n    opt.step()",
    # user-defined autograd: a Function with the ctx API (saved tensors; an input marked dirty), a hook
    "fn_apply": "{out} = Scale.apply({t})",
    "fn_inplace": "ScaleInPlace.apply({t})",
    "hook": "{out} = {t} * 1\n    _ = {out}.register_hook(lambda g: g * 2) if {out}.requires_grad else None",
    # views (kept, written through, returned)
    "view_flat": "{out} = {t}.view(-1)",
    "view_slice": "{out} = {t}[1:]",
    "view_t": "{out} = {t}.transpose(0, -1)",
    "view_diag": "{out} = {t}.diagonal()",
    "view_unsqueeze": "{out} = {t}.unsqueeze(0)",
    # intermediates
    "fresh": "{out} = {t} * 2 + {o}",
    "fresh_sin": "{out} = {t}.sin()",
}
# statements whose form torch's registry gives (conformance/explore/registry.py), one kind per family
OP_KINDS = {f"op:{family}": family for family in FAMILIES}
METADATA = frozenset({"t_", "unsqueeze_", "transpose_", "squeeze_", "swapdims_", "as_strided_", "resize_",
                      "op:metadata"})
STORAGE_MOVES = frozenset({"set_other", "data_other", "data_op", "set_storage"})
MUTATING = frozenset(
    {"mul_", "add_alpha", "copy_", "fill_", "zero_", "clamp_", "addcmul_", "index_add_dup", "detach_mul_", "set_",
     "data_assign", "mul_lr", "mul_half_lr", "add_alpha_lr", "div_pow_lr", "neg_lr", "one_minus_lr",
     "module_param_mul_", "opt_step", "op:inplace", "fn_inplace"} | METADATA | STORAGE_MOVES
)
FLOAT_KINDS = ("mul_lr", "mul_half_lr", "add_alpha_lr", "div_pow_lr", "add_fn_lr", "addcmul_fn_lr", "clamp_min_lr",
               "leaky_lr", "full_like_lr", "neg_lr", "one_minus_lr", "square_lr")
MODULE_KINDS = ("module_call", "module_param_mul_", "opt_step")
OPTIMIZER_KINDS = ("opt_step",)
# storage moved into or out of a wrapper subclass crashes eager itself (a segfault in 2.13): no verdict on
# the compiled path, so the grammar does not draw it
NOT_ON_SUBCLASSES = STORAGE_MOVES | {"set_", "data_assign", "as_strided_", "resize_", "index_add_dup"}
BINARY = frozenset({"add_alpha", "copy_", "addcmul_", "index_add_dup", "fresh", "add_alpha_lr", "set_", "data_assign",
                    "set_other", "data_other", "set_storage", "add_fn_lr", "addcmul_fn_lr"})


STORAGE = STORAGE_MOVES | {"set_", "data_assign"}
VIEWS = frozenset({"view_flat", "view_slice", "view_t", "view_diag", "view_unsqueeze", "op:view"})


def family_of(kind: str) -> str | None:
    """The op family a statement kind belongs to (`explore --coverage` counts by family)."""
    if kind in STORAGE:
        return "storage"
    if kind in METADATA:
        return "metadata"
    if kind in MUTATING:
        return "inplace"
    if kind in VIEWS:
        return "view"
    return "functional" if kind not in MODULE_KINDS or kind == "module_call" else None
