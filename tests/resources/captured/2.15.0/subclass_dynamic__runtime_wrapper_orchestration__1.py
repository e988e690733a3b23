def _runtime_wrapper(_compiled_fn_, _first_ctx_, _on_before_call_, args):
    orig_inputs = {}
    with _first_ctx_():
        grad_enabled = torch.is_grad_enabled()
        try:
            if grad_enabled: torch._C._set_grad_enabled(False)
            _on_before_call_()
            all_outs = _compiled_fn_(args)
            if isinstance(all_outs, tuple):
                all_outs = list(all_outs)
            elif not isinstance(all_outs, list):
                all_outs = [all_outs]
        finally:
            if grad_enabled: torch._C._set_grad_enabled(True)
    del args
    if len(all_outs) != 2:
        raise AssertionError(f"expected 2 outputs, got {len(all_outs)}")
    fw_outs = all_outs
    ret_outs = fw_outs
    _mark_dynamic_(ret_outs[0], _dyn_dims_0)
    _mark_dynamic_(ret_outs[1], _dyn_dims_1)
    return ret_outs