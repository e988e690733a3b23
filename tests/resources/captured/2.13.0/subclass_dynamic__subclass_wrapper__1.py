def inner_fn(args):
    unwrapped_args = []
    unwrapped_args.append(args[0])
    unwrapped_args.append(args[1])
    _inp_0 = args[2]
    assert type(_inp_0) is _expected_type_1, f'expected {_expected_type_1}, got {type(_inp_0)}'
    unwrapped_args.append(_inp_0.a)
    unwrapped_args.append(_inp_0.b)
    _size_2 = _inp_0.size()
    unwrapped_args.append(_size_2[0])
    unwrapped_args.append(_size_2[1])
    _stride_3 = _inp_0.stride()
    unwrapped_args.append(_stride_3[0])
    unwrapped_args.append(args[3])
    unwrapped_args.extend(args[4:])
    args.clear()
    unwrapped_outs = compiled_fn(unwrapped_args)
    _out_inner_4 = {'a': unwrapped_outs[0], 'b': unwrapped_outs[1]}
    _out_7 = _subclass_type_5.__tensor_unflatten__(_out_inner_4, _meta_6, (unwrapped_outs[2], unwrapped_outs[3]), (unwrapped_outs[4], 1))
    return (_out_7, unwrapped_outs[5],)