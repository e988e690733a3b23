def inner_fn(args):
    unwrapped_args = []
    unwrapped_args.append(args[0])
    unwrapped_args.append(args[1])
    _inp_0 = args[2]
    assert type(_inp_0) is _expected_type_1, f'expected {_expected_type_1}, got {type(_inp_0)}'
    unwrapped_args.append(_inp_0.a)
    _size_2 = _inp_0.a.size()
    unwrapped_args.append(_size_2[0])
    unwrapped_args.append(_size_2[1])
    _stride_3 = _inp_0.a.stride()
    unwrapped_args.append(_stride_3[0])
    unwrapped_args.append(_inp_0.b)
    _size_4 = _inp_0.b.size()
    unwrapped_args.append(_size_4[0])
    unwrapped_args.append(_size_4[1])
    _stride_5 = _inp_0.b.stride()
    unwrapped_args.append(_stride_5[0])
    _size_6 = _inp_0.size()
    unwrapped_args.append(_size_6[0])
    unwrapped_args.append(_size_6[1])
    _stride_7 = _inp_0.stride()
    unwrapped_args.append(_stride_7[0])
    unwrapped_args.append(args[3])
    unwrapped_args.extend(args[4:])
    args.clear()
    unwrapped_outs = compiled_fn(unwrapped_args)
    _out_idx = 0
    _num_wrapped_outs = len(unwrapped_outs)
    assert 3 <= _num_wrapped_outs <= 12, f'expected between 3 and 12 wrapped outputs, got {_num_wrapped_outs}'
    _out_attr_10 = unwrapped_outs[_out_idx]
    _out_idx += 1
    _remaining_outs_11 = _num_wrapped_outs - _out_idx
    _include_symints_12 = (_remaining_outs_11 - 1 >= 2 and _remaining_outs_11 - 1 <= 10) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_12 or (_remaining_outs_11 >= 2 and _remaining_outs_11 <= 10), 'could not match output layout with optional SymInt outputs'
    if _include_symints_12:
        _out_idx += 1
    _remaining_outs_13 = _num_wrapped_outs - _out_idx
    _include_symints_14 = (_remaining_outs_13 - 1 >= 2 and _remaining_outs_13 - 1 <= 9) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_14 or (_remaining_outs_13 >= 2 and _remaining_outs_13 <= 9), 'could not match output layout with optional SymInt outputs'
    if _include_symints_14:
        _out_idx += 1
    _remaining_outs_15 = _num_wrapped_outs - _out_idx
    _include_symints_16 = (_remaining_outs_15 - 1 >= 2 and _remaining_outs_15 - 1 <= 8) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_16 or (_remaining_outs_15 >= 2 and _remaining_outs_15 <= 8), 'could not match output layout with optional SymInt outputs'
    if _include_symints_16:
        _out_idx += 1
    _out_attr_17 = unwrapped_outs[_out_idx]
    _out_idx += 1
    _remaining_outs_18 = _num_wrapped_outs - _out_idx
    _include_symints_19 = (_remaining_outs_18 - 1 >= 1 and _remaining_outs_18 - 1 <= 6) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_19 or (_remaining_outs_18 >= 1 and _remaining_outs_18 <= 6), 'could not match output layout with optional SymInt outputs'
    if _include_symints_19:
        _out_idx += 1
    _remaining_outs_20 = _num_wrapped_outs - _out_idx
    _include_symints_21 = (_remaining_outs_20 - 1 >= 1 and _remaining_outs_20 - 1 <= 5) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_21 or (_remaining_outs_20 >= 1 and _remaining_outs_20 <= 5), 'could not match output layout with optional SymInt outputs'
    if _include_symints_21:
        _out_idx += 1
    _remaining_outs_22 = _num_wrapped_outs - _out_idx
    _include_symints_23 = (_remaining_outs_22 - 1 >= 1 and _remaining_outs_22 - 1 <= 4) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_23 or (_remaining_outs_22 >= 1 and _remaining_outs_22 <= 4), 'could not match output layout with optional SymInt outputs'
    if _include_symints_23:
        _out_idx += 1
    _out_inner_9 = {'a': _out_attr_10, 'b': _out_attr_17}
    _remaining_outs_24 = _num_wrapped_outs - _out_idx
    _include_symints_25 = (_remaining_outs_24 - 1 >= 1 and _remaining_outs_24 - 1 <= 3) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_25 or (_remaining_outs_24 >= 1 and _remaining_outs_24 <= 3), 'could not match output layout with optional SymInt outputs'
    if _include_symints_25:
        _out_idx += 1
    _remaining_outs_26 = _num_wrapped_outs - _out_idx
    _include_symints_27 = (_remaining_outs_26 - 1 >= 1 and _remaining_outs_26 - 1 <= 2) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_27 or (_remaining_outs_26 >= 1 and _remaining_outs_26 <= 2), 'could not match output layout with optional SymInt outputs'
    if _include_symints_27:
        _out_idx += 1
    _remaining_outs_28 = _num_wrapped_outs - _out_idx
    _include_symints_29 = (_remaining_outs_28 - 1 >= 1 and _remaining_outs_28 - 1 <= 1) and _is_optional_symint_output_8(unwrapped_outs[_out_idx])
    assert _include_symints_29 or (_remaining_outs_28 >= 1 and _remaining_outs_28 <= 1), 'could not match output layout with optional SymInt outputs'
    if _include_symints_29:
        _out_idx += 1
    _out_32 = _subclass_type_30.__tensor_unflatten__(_out_inner_9, _meta_31, _out_attr_10.size(), _out_attr_10.stride())
    _out_plain_33 = unwrapped_outs[_out_idx]
    _out_idx += 1
    assert _out_idx == _num_wrapped_outs, f'wrapped {_out_idx} outputs, expected {_num_wrapped_outs}'
    return (_out_32, _out_plain_33,)