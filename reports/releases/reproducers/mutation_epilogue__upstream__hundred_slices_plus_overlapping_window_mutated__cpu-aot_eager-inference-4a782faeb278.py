#!bin/env python3
"""One hundred disjoint 10-element slices of an int64 arange(1000) plus one slice [4:44] overlapping the first four (and part of the fifth), each incremented in place under dynamic shapes, end with eager's values in the shared storage, the first slice returned.
Compares compiled with eager on the 1861 checks the harness applies to this program (1 call(s)); exit 3 where any differs, 0 where none does, 4 without the device.
From cases/mutation_epilogue/upstream/hundred_slices_plus_overlapping_window_mutated.yaml."""
import re
import sys

import torch

def f(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide):
    for piece in (s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide):
        piece.add_(1)
    return s0

def run(fn, compiled):  # every call; what each shows, check by check
    calls = []
    seen = {}
    calls.append(seen)
    g = torch.Generator().manual_seed(0)
    base = torch.arange(1000, dtype=torch.float64).reshape((1000,)).to(torch.int64)
    s0 = base[0:10]
    s1 = base[10:20]
    s2 = base[20:30]
    s3 = base[30:40]
    s4 = base[40:50]
    s5 = base[50:60]
    s6 = base[60:70]
    s7 = base[70:80]
    s8 = base[80:90]
    s9 = base[90:100]
    s10 = base[100:110]
    s11 = base[110:120]
    s12 = base[120:130]
    s13 = base[130:140]
    s14 = base[140:150]
    s15 = base[150:160]
    s16 = base[160:170]
    s17 = base[170:180]
    s18 = base[180:190]
    s19 = base[190:200]
    s20 = base[200:210]
    s21 = base[210:220]
    s22 = base[220:230]
    s23 = base[230:240]
    s24 = base[240:250]
    s25 = base[250:260]
    s26 = base[260:270]
    s27 = base[270:280]
    s28 = base[280:290]
    s29 = base[290:300]
    s30 = base[300:310]
    s31 = base[310:320]
    s32 = base[320:330]
    s33 = base[330:340]
    s34 = base[340:350]
    s35 = base[350:360]
    s36 = base[360:370]
    s37 = base[370:380]
    s38 = base[380:390]
    s39 = base[390:400]
    s40 = base[400:410]
    s41 = base[410:420]
    s42 = base[420:430]
    s43 = base[430:440]
    s44 = base[440:450]
    s45 = base[450:460]
    s46 = base[460:470]
    s47 = base[470:480]
    s48 = base[480:490]
    s49 = base[490:500]
    s50 = base[500:510]
    s51 = base[510:520]
    s52 = base[520:530]
    s53 = base[530:540]
    s54 = base[540:550]
    s55 = base[550:560]
    s56 = base[560:570]
    s57 = base[570:580]
    s58 = base[580:590]
    s59 = base[590:600]
    s60 = base[600:610]
    s61 = base[610:620]
    s62 = base[620:630]
    s63 = base[630:640]
    s64 = base[640:650]
    s65 = base[650:660]
    s66 = base[660:670]
    s67 = base[670:680]
    s68 = base[680:690]
    s69 = base[690:700]
    s70 = base[700:710]
    s71 = base[710:720]
    s72 = base[720:730]
    s73 = base[730:740]
    s74 = base[740:750]
    s75 = base[750:760]
    s76 = base[760:770]
    s77 = base[770:780]
    s78 = base[780:790]
    s79 = base[790:800]
    s80 = base[800:810]
    s81 = base[810:820]
    s82 = base[820:830]
    s83 = base[830:840]
    s84 = base[840:850]
    s85 = base[850:860]
    s86 = base[860:870]
    s87 = base[870:880]
    s88 = base[880:890]
    s89 = base[890:900]
    s90 = base[900:910]
    s91 = base[910:920]
    s92 = base[920:930]
    s93 = base[930:940]
    s94 = base[940:950]
    s95 = base[950:960]
    s96 = base[960:970]
    s97 = base[970:980]
    s98 = base[980:990]
    s99 = base[990:1000]
    wide = base[4:44]
    version_before = {'base': base._version, 's0': s0._version, 's1': s1._version, 's10': s10._version, 's11': s11._version, 's12': s12._version, 's13': s13._version, 's14': s14._version, 's15': s15._version, 's16': s16._version, 's17': s17._version, 's18': s18._version, 's19': s19._version, 's2': s2._version, 's20': s20._version, 's21': s21._version, 's22': s22._version, 's23': s23._version, 's24': s24._version, 's25': s25._version, 's26': s26._version, 's27': s27._version, 's28': s28._version, 's29': s29._version, 's3': s3._version, 's30': s30._version, 's31': s31._version, 's32': s32._version, 's33': s33._version, 's34': s34._version, 's35': s35._version, 's36': s36._version, 's37': s37._version, 's38': s38._version, 's39': s39._version, 's4': s4._version, 's40': s40._version, 's41': s41._version, 's42': s42._version, 's43': s43._version, 's44': s44._version, 's45': s45._version, 's46': s46._version, 's47': s47._version, 's48': s48._version, 's49': s49._version, 's5': s5._version, 's50': s50._version, 's51': s51._version, 's52': s52._version, 's53': s53._version, 's54': s54._version, 's55': s55._version, 's56': s56._version, 's57': s57._version, 's58': s58._version, 's59': s59._version, 's6': s6._version, 's60': s60._version, 's61': s61._version, 's62': s62._version, 's63': s63._version, 's64': s64._version, 's65': s65._version, 's66': s66._version, 's67': s67._version, 's68': s68._version, 's69': s69._version, 's7': s7._version, 's70': s70._version, 's71': s71._version, 's72': s72._version, 's73': s73._version, 's74': s74._version, 's75': s75._version, 's76': s76._version, 's77': s77._version, 's78': s78._version, 's79': s79._version, 's8': s8._version, 's80': s80._version, 's81': s81._version, 's82': s82._version, 's83': s83._version, 's84': s84._version, 's85': s85._version, 's86': s86._version, 's87': s87._version, 's88': s88._version, 's89': s89._version, 's9': s9._version, 's90': s90._version, 's91': s91._version, 's92': s92._version, 's93': s93._version, 's94': s94._version, 's95': s95._version, 's96': s96._version, 's97': s97._version, 's98': s98._version, 's99': s99._version, 'wide': wide._version}
    storage_before = {'base': base.untyped_storage(), 's0': s0.untyped_storage(), 's1': s1.untyped_storage(), 's10': s10.untyped_storage(), 's11': s11.untyped_storage(), 's12': s12.untyped_storage(), 's13': s13.untyped_storage(), 's14': s14.untyped_storage(), 's15': s15.untyped_storage(), 's16': s16.untyped_storage(), 's17': s17.untyped_storage(), 's18': s18.untyped_storage(), 's19': s19.untyped_storage(), 's2': s2.untyped_storage(), 's20': s20.untyped_storage(), 's21': s21.untyped_storage(), 's22': s22.untyped_storage(), 's23': s23.untyped_storage(), 's24': s24.untyped_storage(), 's25': s25.untyped_storage(), 's26': s26.untyped_storage(), 's27': s27.untyped_storage(), 's28': s28.untyped_storage(), 's29': s29.untyped_storage(), 's3': s3.untyped_storage(), 's30': s30.untyped_storage(), 's31': s31.untyped_storage(), 's32': s32.untyped_storage(), 's33': s33.untyped_storage(), 's34': s34.untyped_storage(), 's35': s35.untyped_storage(), 's36': s36.untyped_storage(), 's37': s37.untyped_storage(), 's38': s38.untyped_storage(), 's39': s39.untyped_storage(), 's4': s4.untyped_storage(), 's40': s40.untyped_storage(), 's41': s41.untyped_storage(), 's42': s42.untyped_storage(), 's43': s43.untyped_storage(), 's44': s44.untyped_storage(), 's45': s45.untyped_storage(), 's46': s46.untyped_storage(), 's47': s47.untyped_storage(), 's48': s48.untyped_storage(), 's49': s49.untyped_storage(), 's5': s5.untyped_storage(), 's50': s50.untyped_storage(), 's51': s51.untyped_storage(), 's52': s52.untyped_storage(), 's53': s53.untyped_storage(), 's54': s54.untyped_storage(), 's55': s55.untyped_storage(), 's56': s56.untyped_storage(), 's57': s57.untyped_storage(), 's58': s58.untyped_storage(), 's59': s59.untyped_storage(), 's6': s6.untyped_storage(), 's60': s60.untyped_storage(), 's61': s61.untyped_storage(), 's62': s62.untyped_storage(), 's63': s63.untyped_storage(), 's64': s64.untyped_storage(), 's65': s65.untyped_storage(), 's66': s66.untyped_storage(), 's67': s67.untyped_storage(), 's68': s68.untyped_storage(), 's69': s69.untyped_storage(), 's7': s7.untyped_storage(), 's70': s70.untyped_storage(), 's71': s71.untyped_storage(), 's72': s72.untyped_storage(), 's73': s73.untyped_storage(), 's74': s74.untyped_storage(), 's75': s75.untyped_storage(), 's76': s76.untyped_storage(), 's77': s77.untyped_storage(), 's78': s78.untyped_storage(), 's79': s79.untyped_storage(), 's8': s8.untyped_storage(), 's80': s80.untyped_storage(), 's81': s81.untyped_storage(), 's82': s82.untyped_storage(), 's83': s83.untyped_storage(), 's84': s84.untyped_storage(), 's85': s85.untyped_storage(), 's86': s86.untyped_storage(), 's87': s87.untyped_storage(), 's88': s88.untyped_storage(), 's89': s89.untyped_storage(), 's9': s9.untyped_storage(), 's90': s90.untyped_storage(), 's91': s91.untyped_storage(), 's92': s92.untyped_storage(), 's93': s93.untyped_storage(), 's94': s94.untyped_storage(), 's95': s95.untyped_storage(), 's96': s96.untyped_storage(), 's97': s97.untyped_storage(), 's98': s98.untyped_storage(), 's99': s99.untyped_storage(), 'wide': wide.untyped_storage()}
    try:
        out = fn(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide)
        modes = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), tuple(torch.is_autocast_enabled(d) for d in ('cpu', 'cuda')))
        seen['call'] = {'exception': None}
    except Exception as exc:
        seen['call'] = {'exception': raised(exc)}
        return calls
    outs = flatten_outputs(out)
    tensors = {'base': base, 's0': s0, 's1': s1, 's2': s2, 's3': s3, 's4': s4, 's5': s5, 's6': s6, 's7': s7, 's8': s8, 's9': s9, 's10': s10, 's11': s11, 's12': s12, 's13': s13, 's14': s14, 's15': s15, 's16': s16, 's17': s17, 's18': s18, 's19': s19, 's20': s20, 's21': s21, 's22': s22, 's23': s23, 's24': s24, 's25': s25, 's26': s26, 's27': s27, 's28': s28, 's29': s29, 's30': s30, 's31': s31, 's32': s32, 's33': s33, 's34': s34, 's35': s35, 's36': s36, 's37': s37, 's38': s38, 's39': s39, 's40': s40, 's41': s41, 's42': s42, 's43': s43, 's44': s44, 's45': s45, 's46': s46, 's47': s47, 's48': s48, 's49': s49, 's50': s50, 's51': s51, 's52': s52, 's53': s53, 's54': s54, 's55': s55, 's56': s56, 's57': s57, 's58': s58, 's59': s59, 's60': s60, 's61': s61, 's62': s62, 's63': s63, 's64': s64, 's65': s65, 's66': s66, 's67': s67, 's68': s68, 's69': s69, 's70': s70, 's71': s71, 's72': s72, 's73': s73, 's74': s74, 's75': s75, 's76': s76, 's77': s77, 's78': s78, 's79': s79, 's80': s80, 's81': s81, 's82': s82, 's83': s83, 's84': s84, 's85': s85, 's86': s86, 's87': s87, 's88': s88, 's89': s89, 's90': s90, 's91': s91, 's92': s92, 's93': s93, 's94': s94, 's95': s95, 's96': s96, 's97': s97, 's98': s98, 's99': s99, 'wide': wide}
    seen['outputs'] = observed(lambda: {'structure': output_structure(out), 'number of outputs': len(outs)})
    seen['out[0]'] = observed(lambda: {**look(out, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'is the input object': next((n for n, x in tensors.items() if x is out), None), 'shares storage with': sorted(n for n, x in tensors.items() if x is not out and storage_key(x) is not None and storage_key(x) == storage_key(out))})
    seen['input base'] = observed(lambda: {**look(base, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': base.untyped_storage() is not storage_before['base'], '_version moved': base._version - version_before['base'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not base and storage_key(x) is not None and storage_key(x) == storage_key(base))})
    seen['input s0'] = observed(lambda: {**look(s0, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s0.untyped_storage() is not storage_before['s0'], '_version moved': s0._version - version_before['s0'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s0 and storage_key(x) is not None and storage_key(x) == storage_key(s0))})
    seen['input s1'] = observed(lambda: {**look(s1, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s1.untyped_storage() is not storage_before['s1'], '_version moved': s1._version - version_before['s1'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s1 and storage_key(x) is not None and storage_key(x) == storage_key(s1))})
    seen['input s2'] = observed(lambda: {**look(s2, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s2.untyped_storage() is not storage_before['s2'], '_version moved': s2._version - version_before['s2'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s2 and storage_key(x) is not None and storage_key(x) == storage_key(s2))})
    seen['input s3'] = observed(lambda: {**look(s3, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s3.untyped_storage() is not storage_before['s3'], '_version moved': s3._version - version_before['s3'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s3 and storage_key(x) is not None and storage_key(x) == storage_key(s3))})
    seen['input s4'] = observed(lambda: {**look(s4, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s4.untyped_storage() is not storage_before['s4'], '_version moved': s4._version - version_before['s4'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s4 and storage_key(x) is not None and storage_key(x) == storage_key(s4))})
    seen['input s5'] = observed(lambda: {**look(s5, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s5.untyped_storage() is not storage_before['s5'], '_version moved': s5._version - version_before['s5'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s5 and storage_key(x) is not None and storage_key(x) == storage_key(s5))})
    seen['input s6'] = observed(lambda: {**look(s6, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s6.untyped_storage() is not storage_before['s6'], '_version moved': s6._version - version_before['s6'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s6 and storage_key(x) is not None and storage_key(x) == storage_key(s6))})
    seen['input s7'] = observed(lambda: {**look(s7, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s7.untyped_storage() is not storage_before['s7'], '_version moved': s7._version - version_before['s7'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s7 and storage_key(x) is not None and storage_key(x) == storage_key(s7))})
    seen['input s8'] = observed(lambda: {**look(s8, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s8.untyped_storage() is not storage_before['s8'], '_version moved': s8._version - version_before['s8'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s8 and storage_key(x) is not None and storage_key(x) == storage_key(s8))})
    seen['input s9'] = observed(lambda: {**look(s9, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s9.untyped_storage() is not storage_before['s9'], '_version moved': s9._version - version_before['s9'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s9 and storage_key(x) is not None and storage_key(x) == storage_key(s9))})
    seen['input s10'] = observed(lambda: {**look(s10, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s10.untyped_storage() is not storage_before['s10'], '_version moved': s10._version - version_before['s10'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s10 and storage_key(x) is not None and storage_key(x) == storage_key(s10))})
    seen['input s11'] = observed(lambda: {**look(s11, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s11.untyped_storage() is not storage_before['s11'], '_version moved': s11._version - version_before['s11'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s11 and storage_key(x) is not None and storage_key(x) == storage_key(s11))})
    seen['input s12'] = observed(lambda: {**look(s12, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s12.untyped_storage() is not storage_before['s12'], '_version moved': s12._version - version_before['s12'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s12 and storage_key(x) is not None and storage_key(x) == storage_key(s12))})
    seen['input s13'] = observed(lambda: {**look(s13, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s13.untyped_storage() is not storage_before['s13'], '_version moved': s13._version - version_before['s13'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s13 and storage_key(x) is not None and storage_key(x) == storage_key(s13))})
    seen['input s14'] = observed(lambda: {**look(s14, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s14.untyped_storage() is not storage_before['s14'], '_version moved': s14._version - version_before['s14'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s14 and storage_key(x) is not None and storage_key(x) == storage_key(s14))})
    seen['input s15'] = observed(lambda: {**look(s15, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s15.untyped_storage() is not storage_before['s15'], '_version moved': s15._version - version_before['s15'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s15 and storage_key(x) is not None and storage_key(x) == storage_key(s15))})
    seen['input s16'] = observed(lambda: {**look(s16, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s16.untyped_storage() is not storage_before['s16'], '_version moved': s16._version - version_before['s16'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s16 and storage_key(x) is not None and storage_key(x) == storage_key(s16))})
    seen['input s17'] = observed(lambda: {**look(s17, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s17.untyped_storage() is not storage_before['s17'], '_version moved': s17._version - version_before['s17'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s17 and storage_key(x) is not None and storage_key(x) == storage_key(s17))})
    seen['input s18'] = observed(lambda: {**look(s18, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s18.untyped_storage() is not storage_before['s18'], '_version moved': s18._version - version_before['s18'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s18 and storage_key(x) is not None and storage_key(x) == storage_key(s18))})
    seen['input s19'] = observed(lambda: {**look(s19, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s19.untyped_storage() is not storage_before['s19'], '_version moved': s19._version - version_before['s19'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s19 and storage_key(x) is not None and storage_key(x) == storage_key(s19))})
    seen['input s20'] = observed(lambda: {**look(s20, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s20.untyped_storage() is not storage_before['s20'], '_version moved': s20._version - version_before['s20'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s20 and storage_key(x) is not None and storage_key(x) == storage_key(s20))})
    seen['input s21'] = observed(lambda: {**look(s21, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s21.untyped_storage() is not storage_before['s21'], '_version moved': s21._version - version_before['s21'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s21 and storage_key(x) is not None and storage_key(x) == storage_key(s21))})
    seen['input s22'] = observed(lambda: {**look(s22, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s22.untyped_storage() is not storage_before['s22'], '_version moved': s22._version - version_before['s22'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s22 and storage_key(x) is not None and storage_key(x) == storage_key(s22))})
    seen['input s23'] = observed(lambda: {**look(s23, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s23.untyped_storage() is not storage_before['s23'], '_version moved': s23._version - version_before['s23'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s23 and storage_key(x) is not None and storage_key(x) == storage_key(s23))})
    seen['input s24'] = observed(lambda: {**look(s24, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s24.untyped_storage() is not storage_before['s24'], '_version moved': s24._version - version_before['s24'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s24 and storage_key(x) is not None and storage_key(x) == storage_key(s24))})
    seen['input s25'] = observed(lambda: {**look(s25, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s25.untyped_storage() is not storage_before['s25'], '_version moved': s25._version - version_before['s25'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s25 and storage_key(x) is not None and storage_key(x) == storage_key(s25))})
    seen['input s26'] = observed(lambda: {**look(s26, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s26.untyped_storage() is not storage_before['s26'], '_version moved': s26._version - version_before['s26'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s26 and storage_key(x) is not None and storage_key(x) == storage_key(s26))})
    seen['input s27'] = observed(lambda: {**look(s27, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s27.untyped_storage() is not storage_before['s27'], '_version moved': s27._version - version_before['s27'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s27 and storage_key(x) is not None and storage_key(x) == storage_key(s27))})
    seen['input s28'] = observed(lambda: {**look(s28, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s28.untyped_storage() is not storage_before['s28'], '_version moved': s28._version - version_before['s28'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s28 and storage_key(x) is not None and storage_key(x) == storage_key(s28))})
    seen['input s29'] = observed(lambda: {**look(s29, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s29.untyped_storage() is not storage_before['s29'], '_version moved': s29._version - version_before['s29'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s29 and storage_key(x) is not None and storage_key(x) == storage_key(s29))})
    seen['input s30'] = observed(lambda: {**look(s30, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s30.untyped_storage() is not storage_before['s30'], '_version moved': s30._version - version_before['s30'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s30 and storage_key(x) is not None and storage_key(x) == storage_key(s30))})
    seen['input s31'] = observed(lambda: {**look(s31, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s31.untyped_storage() is not storage_before['s31'], '_version moved': s31._version - version_before['s31'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s31 and storage_key(x) is not None and storage_key(x) == storage_key(s31))})
    seen['input s32'] = observed(lambda: {**look(s32, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s32.untyped_storage() is not storage_before['s32'], '_version moved': s32._version - version_before['s32'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s32 and storage_key(x) is not None and storage_key(x) == storage_key(s32))})
    seen['input s33'] = observed(lambda: {**look(s33, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s33.untyped_storage() is not storage_before['s33'], '_version moved': s33._version - version_before['s33'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s33 and storage_key(x) is not None and storage_key(x) == storage_key(s33))})
    seen['input s34'] = observed(lambda: {**look(s34, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s34.untyped_storage() is not storage_before['s34'], '_version moved': s34._version - version_before['s34'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s34 and storage_key(x) is not None and storage_key(x) == storage_key(s34))})
    seen['input s35'] = observed(lambda: {**look(s35, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s35.untyped_storage() is not storage_before['s35'], '_version moved': s35._version - version_before['s35'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s35 and storage_key(x) is not None and storage_key(x) == storage_key(s35))})
    seen['input s36'] = observed(lambda: {**look(s36, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s36.untyped_storage() is not storage_before['s36'], '_version moved': s36._version - version_before['s36'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s36 and storage_key(x) is not None and storage_key(x) == storage_key(s36))})
    seen['input s37'] = observed(lambda: {**look(s37, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s37.untyped_storage() is not storage_before['s37'], '_version moved': s37._version - version_before['s37'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s37 and storage_key(x) is not None and storage_key(x) == storage_key(s37))})
    seen['input s38'] = observed(lambda: {**look(s38, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s38.untyped_storage() is not storage_before['s38'], '_version moved': s38._version - version_before['s38'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s38 and storage_key(x) is not None and storage_key(x) == storage_key(s38))})
    seen['input s39'] = observed(lambda: {**look(s39, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s39.untyped_storage() is not storage_before['s39'], '_version moved': s39._version - version_before['s39'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s39 and storage_key(x) is not None and storage_key(x) == storage_key(s39))})
    seen['input s40'] = observed(lambda: {**look(s40, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s40.untyped_storage() is not storage_before['s40'], '_version moved': s40._version - version_before['s40'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s40 and storage_key(x) is not None and storage_key(x) == storage_key(s40))})
    seen['input s41'] = observed(lambda: {**look(s41, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s41.untyped_storage() is not storage_before['s41'], '_version moved': s41._version - version_before['s41'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s41 and storage_key(x) is not None and storage_key(x) == storage_key(s41))})
    seen['input s42'] = observed(lambda: {**look(s42, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s42.untyped_storage() is not storage_before['s42'], '_version moved': s42._version - version_before['s42'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s42 and storage_key(x) is not None and storage_key(x) == storage_key(s42))})
    seen['input s43'] = observed(lambda: {**look(s43, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s43.untyped_storage() is not storage_before['s43'], '_version moved': s43._version - version_before['s43'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s43 and storage_key(x) is not None and storage_key(x) == storage_key(s43))})
    seen['input s44'] = observed(lambda: {**look(s44, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s44.untyped_storage() is not storage_before['s44'], '_version moved': s44._version - version_before['s44'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s44 and storage_key(x) is not None and storage_key(x) == storage_key(s44))})
    seen['input s45'] = observed(lambda: {**look(s45, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s45.untyped_storage() is not storage_before['s45'], '_version moved': s45._version - version_before['s45'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s45 and storage_key(x) is not None and storage_key(x) == storage_key(s45))})
    seen['input s46'] = observed(lambda: {**look(s46, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s46.untyped_storage() is not storage_before['s46'], '_version moved': s46._version - version_before['s46'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s46 and storage_key(x) is not None and storage_key(x) == storage_key(s46))})
    seen['input s47'] = observed(lambda: {**look(s47, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s47.untyped_storage() is not storage_before['s47'], '_version moved': s47._version - version_before['s47'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s47 and storage_key(x) is not None and storage_key(x) == storage_key(s47))})
    seen['input s48'] = observed(lambda: {**look(s48, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s48.untyped_storage() is not storage_before['s48'], '_version moved': s48._version - version_before['s48'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s48 and storage_key(x) is not None and storage_key(x) == storage_key(s48))})
    seen['input s49'] = observed(lambda: {**look(s49, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s49.untyped_storage() is not storage_before['s49'], '_version moved': s49._version - version_before['s49'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s49 and storage_key(x) is not None and storage_key(x) == storage_key(s49))})
    seen['input s50'] = observed(lambda: {**look(s50, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s50.untyped_storage() is not storage_before['s50'], '_version moved': s50._version - version_before['s50'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s50 and storage_key(x) is not None and storage_key(x) == storage_key(s50))})
    seen['input s51'] = observed(lambda: {**look(s51, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s51.untyped_storage() is not storage_before['s51'], '_version moved': s51._version - version_before['s51'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s51 and storage_key(x) is not None and storage_key(x) == storage_key(s51))})
    seen['input s52'] = observed(lambda: {**look(s52, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s52.untyped_storage() is not storage_before['s52'], '_version moved': s52._version - version_before['s52'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s52 and storage_key(x) is not None and storage_key(x) == storage_key(s52))})
    seen['input s53'] = observed(lambda: {**look(s53, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s53.untyped_storage() is not storage_before['s53'], '_version moved': s53._version - version_before['s53'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s53 and storage_key(x) is not None and storage_key(x) == storage_key(s53))})
    seen['input s54'] = observed(lambda: {**look(s54, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s54.untyped_storage() is not storage_before['s54'], '_version moved': s54._version - version_before['s54'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s54 and storage_key(x) is not None and storage_key(x) == storage_key(s54))})
    seen['input s55'] = observed(lambda: {**look(s55, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s55.untyped_storage() is not storage_before['s55'], '_version moved': s55._version - version_before['s55'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s55 and storage_key(x) is not None and storage_key(x) == storage_key(s55))})
    seen['input s56'] = observed(lambda: {**look(s56, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s56.untyped_storage() is not storage_before['s56'], '_version moved': s56._version - version_before['s56'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s56 and storage_key(x) is not None and storage_key(x) == storage_key(s56))})
    seen['input s57'] = observed(lambda: {**look(s57, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s57.untyped_storage() is not storage_before['s57'], '_version moved': s57._version - version_before['s57'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s57 and storage_key(x) is not None and storage_key(x) == storage_key(s57))})
    seen['input s58'] = observed(lambda: {**look(s58, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s58.untyped_storage() is not storage_before['s58'], '_version moved': s58._version - version_before['s58'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s58 and storage_key(x) is not None and storage_key(x) == storage_key(s58))})
    seen['input s59'] = observed(lambda: {**look(s59, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s59.untyped_storage() is not storage_before['s59'], '_version moved': s59._version - version_before['s59'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s59 and storage_key(x) is not None and storage_key(x) == storage_key(s59))})
    seen['input s60'] = observed(lambda: {**look(s60, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s60.untyped_storage() is not storage_before['s60'], '_version moved': s60._version - version_before['s60'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s60 and storage_key(x) is not None and storage_key(x) == storage_key(s60))})
    seen['input s61'] = observed(lambda: {**look(s61, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s61.untyped_storage() is not storage_before['s61'], '_version moved': s61._version - version_before['s61'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s61 and storage_key(x) is not None and storage_key(x) == storage_key(s61))})
    seen['input s62'] = observed(lambda: {**look(s62, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s62.untyped_storage() is not storage_before['s62'], '_version moved': s62._version - version_before['s62'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s62 and storage_key(x) is not None and storage_key(x) == storage_key(s62))})
    seen['input s63'] = observed(lambda: {**look(s63, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s63.untyped_storage() is not storage_before['s63'], '_version moved': s63._version - version_before['s63'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s63 and storage_key(x) is not None and storage_key(x) == storage_key(s63))})
    seen['input s64'] = observed(lambda: {**look(s64, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s64.untyped_storage() is not storage_before['s64'], '_version moved': s64._version - version_before['s64'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s64 and storage_key(x) is not None and storage_key(x) == storage_key(s64))})
    seen['input s65'] = observed(lambda: {**look(s65, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s65.untyped_storage() is not storage_before['s65'], '_version moved': s65._version - version_before['s65'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s65 and storage_key(x) is not None and storage_key(x) == storage_key(s65))})
    seen['input s66'] = observed(lambda: {**look(s66, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s66.untyped_storage() is not storage_before['s66'], '_version moved': s66._version - version_before['s66'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s66 and storage_key(x) is not None and storage_key(x) == storage_key(s66))})
    seen['input s67'] = observed(lambda: {**look(s67, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s67.untyped_storage() is not storage_before['s67'], '_version moved': s67._version - version_before['s67'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s67 and storage_key(x) is not None and storage_key(x) == storage_key(s67))})
    seen['input s68'] = observed(lambda: {**look(s68, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s68.untyped_storage() is not storage_before['s68'], '_version moved': s68._version - version_before['s68'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s68 and storage_key(x) is not None and storage_key(x) == storage_key(s68))})
    seen['input s69'] = observed(lambda: {**look(s69, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s69.untyped_storage() is not storage_before['s69'], '_version moved': s69._version - version_before['s69'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s69 and storage_key(x) is not None and storage_key(x) == storage_key(s69))})
    seen['input s70'] = observed(lambda: {**look(s70, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s70.untyped_storage() is not storage_before['s70'], '_version moved': s70._version - version_before['s70'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s70 and storage_key(x) is not None and storage_key(x) == storage_key(s70))})
    seen['input s71'] = observed(lambda: {**look(s71, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s71.untyped_storage() is not storage_before['s71'], '_version moved': s71._version - version_before['s71'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s71 and storage_key(x) is not None and storage_key(x) == storage_key(s71))})
    seen['input s72'] = observed(lambda: {**look(s72, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s72.untyped_storage() is not storage_before['s72'], '_version moved': s72._version - version_before['s72'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s72 and storage_key(x) is not None and storage_key(x) == storage_key(s72))})
    seen['input s73'] = observed(lambda: {**look(s73, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s73.untyped_storage() is not storage_before['s73'], '_version moved': s73._version - version_before['s73'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s73 and storage_key(x) is not None and storage_key(x) == storage_key(s73))})
    seen['input s74'] = observed(lambda: {**look(s74, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s74.untyped_storage() is not storage_before['s74'], '_version moved': s74._version - version_before['s74'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s74 and storage_key(x) is not None and storage_key(x) == storage_key(s74))})
    seen['input s75'] = observed(lambda: {**look(s75, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s75.untyped_storage() is not storage_before['s75'], '_version moved': s75._version - version_before['s75'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s75 and storage_key(x) is not None and storage_key(x) == storage_key(s75))})
    seen['input s76'] = observed(lambda: {**look(s76, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s76.untyped_storage() is not storage_before['s76'], '_version moved': s76._version - version_before['s76'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s76 and storage_key(x) is not None and storage_key(x) == storage_key(s76))})
    seen['input s77'] = observed(lambda: {**look(s77, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s77.untyped_storage() is not storage_before['s77'], '_version moved': s77._version - version_before['s77'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s77 and storage_key(x) is not None and storage_key(x) == storage_key(s77))})
    seen['input s78'] = observed(lambda: {**look(s78, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s78.untyped_storage() is not storage_before['s78'], '_version moved': s78._version - version_before['s78'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s78 and storage_key(x) is not None and storage_key(x) == storage_key(s78))})
    seen['input s79'] = observed(lambda: {**look(s79, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s79.untyped_storage() is not storage_before['s79'], '_version moved': s79._version - version_before['s79'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s79 and storage_key(x) is not None and storage_key(x) == storage_key(s79))})
    seen['input s80'] = observed(lambda: {**look(s80, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s80.untyped_storage() is not storage_before['s80'], '_version moved': s80._version - version_before['s80'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s80 and storage_key(x) is not None and storage_key(x) == storage_key(s80))})
    seen['input s81'] = observed(lambda: {**look(s81, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s81.untyped_storage() is not storage_before['s81'], '_version moved': s81._version - version_before['s81'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s81 and storage_key(x) is not None and storage_key(x) == storage_key(s81))})
    seen['input s82'] = observed(lambda: {**look(s82, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s82.untyped_storage() is not storage_before['s82'], '_version moved': s82._version - version_before['s82'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s82 and storage_key(x) is not None and storage_key(x) == storage_key(s82))})
    seen['input s83'] = observed(lambda: {**look(s83, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s83.untyped_storage() is not storage_before['s83'], '_version moved': s83._version - version_before['s83'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s83 and storage_key(x) is not None and storage_key(x) == storage_key(s83))})
    seen['input s84'] = observed(lambda: {**look(s84, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s84.untyped_storage() is not storage_before['s84'], '_version moved': s84._version - version_before['s84'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s84 and storage_key(x) is not None and storage_key(x) == storage_key(s84))})
    seen['input s85'] = observed(lambda: {**look(s85, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s85.untyped_storage() is not storage_before['s85'], '_version moved': s85._version - version_before['s85'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s85 and storage_key(x) is not None and storage_key(x) == storage_key(s85))})
    seen['input s86'] = observed(lambda: {**look(s86, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s86.untyped_storage() is not storage_before['s86'], '_version moved': s86._version - version_before['s86'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s86 and storage_key(x) is not None and storage_key(x) == storage_key(s86))})
    seen['input s87'] = observed(lambda: {**look(s87, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s87.untyped_storage() is not storage_before['s87'], '_version moved': s87._version - version_before['s87'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s87 and storage_key(x) is not None and storage_key(x) == storage_key(s87))})
    seen['input s88'] = observed(lambda: {**look(s88, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s88.untyped_storage() is not storage_before['s88'], '_version moved': s88._version - version_before['s88'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s88 and storage_key(x) is not None and storage_key(x) == storage_key(s88))})
    seen['input s89'] = observed(lambda: {**look(s89, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s89.untyped_storage() is not storage_before['s89'], '_version moved': s89._version - version_before['s89'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s89 and storage_key(x) is not None and storage_key(x) == storage_key(s89))})
    seen['input s90'] = observed(lambda: {**look(s90, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s90.untyped_storage() is not storage_before['s90'], '_version moved': s90._version - version_before['s90'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s90 and storage_key(x) is not None and storage_key(x) == storage_key(s90))})
    seen['input s91'] = observed(lambda: {**look(s91, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s91.untyped_storage() is not storage_before['s91'], '_version moved': s91._version - version_before['s91'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s91 and storage_key(x) is not None and storage_key(x) == storage_key(s91))})
    seen['input s92'] = observed(lambda: {**look(s92, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s92.untyped_storage() is not storage_before['s92'], '_version moved': s92._version - version_before['s92'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s92 and storage_key(x) is not None and storage_key(x) == storage_key(s92))})
    seen['input s93'] = observed(lambda: {**look(s93, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s93.untyped_storage() is not storage_before['s93'], '_version moved': s93._version - version_before['s93'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s93 and storage_key(x) is not None and storage_key(x) == storage_key(s93))})
    seen['input s94'] = observed(lambda: {**look(s94, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s94.untyped_storage() is not storage_before['s94'], '_version moved': s94._version - version_before['s94'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s94 and storage_key(x) is not None and storage_key(x) == storage_key(s94))})
    seen['input s95'] = observed(lambda: {**look(s95, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s95.untyped_storage() is not storage_before['s95'], '_version moved': s95._version - version_before['s95'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s95 and storage_key(x) is not None and storage_key(x) == storage_key(s95))})
    seen['input s96'] = observed(lambda: {**look(s96, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s96.untyped_storage() is not storage_before['s96'], '_version moved': s96._version - version_before['s96'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s96 and storage_key(x) is not None and storage_key(x) == storage_key(s96))})
    seen['input s97'] = observed(lambda: {**look(s97, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s97.untyped_storage() is not storage_before['s97'], '_version moved': s97._version - version_before['s97'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s97 and storage_key(x) is not None and storage_key(x) == storage_key(s97))})
    seen['input s98'] = observed(lambda: {**look(s98, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s98.untyped_storage() is not storage_before['s98'], '_version moved': s98._version - version_before['s98'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s98 and storage_key(x) is not None and storage_key(x) == storage_key(s98))})
    seen['input s99'] = observed(lambda: {**look(s99, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': s99.untyped_storage() is not storage_before['s99'], '_version moved': s99._version - version_before['s99'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not s99 and storage_key(x) is not None and storage_key(x) == storage_key(s99))})
    seen['input wide'] = observed(lambda: {**look(wide, 'type', 'dtype', 'device', 'shape', 'stride', 'storage_offset', 'requires_grad', 'is_leaf', 'values', 'storage contents'), 'storage swapped (set_)': wide.untyped_storage() is not storage_before['wide'], '_version moved': wide._version - version_before['wide'], 'shares storage with': sorted(n for n, x in tensors.items() if x is not wide and storage_key(x) is not None and storage_key(x) == storage_key(wide))})
    seen['after the call'] = observed(lambda: {'grad mode': modes[0], 'inference mode': modes[1], 'autocast': modes[2]})
    written = write_through_outputs(outs)  # in place, through each output
    seen['after writing through the outputs'] = observed(lambda: {'in-place write through outputs': written})
    seen['after writing through the outputs: base'] = observed(lambda: look(base, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s0'] = observed(lambda: look(s0, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s1'] = observed(lambda: look(s1, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s2'] = observed(lambda: look(s2, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s3'] = observed(lambda: look(s3, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s4'] = observed(lambda: look(s4, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s5'] = observed(lambda: look(s5, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s6'] = observed(lambda: look(s6, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s7'] = observed(lambda: look(s7, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s8'] = observed(lambda: look(s8, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s9'] = observed(lambda: look(s9, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s10'] = observed(lambda: look(s10, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s11'] = observed(lambda: look(s11, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s12'] = observed(lambda: look(s12, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s13'] = observed(lambda: look(s13, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s14'] = observed(lambda: look(s14, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s15'] = observed(lambda: look(s15, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s16'] = observed(lambda: look(s16, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s17'] = observed(lambda: look(s17, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s18'] = observed(lambda: look(s18, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s19'] = observed(lambda: look(s19, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s20'] = observed(lambda: look(s20, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s21'] = observed(lambda: look(s21, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s22'] = observed(lambda: look(s22, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s23'] = observed(lambda: look(s23, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s24'] = observed(lambda: look(s24, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s25'] = observed(lambda: look(s25, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s26'] = observed(lambda: look(s26, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s27'] = observed(lambda: look(s27, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s28'] = observed(lambda: look(s28, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s29'] = observed(lambda: look(s29, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s30'] = observed(lambda: look(s30, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s31'] = observed(lambda: look(s31, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s32'] = observed(lambda: look(s32, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s33'] = observed(lambda: look(s33, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s34'] = observed(lambda: look(s34, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s35'] = observed(lambda: look(s35, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s36'] = observed(lambda: look(s36, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s37'] = observed(lambda: look(s37, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s38'] = observed(lambda: look(s38, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s39'] = observed(lambda: look(s39, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s40'] = observed(lambda: look(s40, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s41'] = observed(lambda: look(s41, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s42'] = observed(lambda: look(s42, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s43'] = observed(lambda: look(s43, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s44'] = observed(lambda: look(s44, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s45'] = observed(lambda: look(s45, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s46'] = observed(lambda: look(s46, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s47'] = observed(lambda: look(s47, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s48'] = observed(lambda: look(s48, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s49'] = observed(lambda: look(s49, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s50'] = observed(lambda: look(s50, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s51'] = observed(lambda: look(s51, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s52'] = observed(lambda: look(s52, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s53'] = observed(lambda: look(s53, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s54'] = observed(lambda: look(s54, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s55'] = observed(lambda: look(s55, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s56'] = observed(lambda: look(s56, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s57'] = observed(lambda: look(s57, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s58'] = observed(lambda: look(s58, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s59'] = observed(lambda: look(s59, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s60'] = observed(lambda: look(s60, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s61'] = observed(lambda: look(s61, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s62'] = observed(lambda: look(s62, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s63'] = observed(lambda: look(s63, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s64'] = observed(lambda: look(s64, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s65'] = observed(lambda: look(s65, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s66'] = observed(lambda: look(s66, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s67'] = observed(lambda: look(s67, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s68'] = observed(lambda: look(s68, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s69'] = observed(lambda: look(s69, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s70'] = observed(lambda: look(s70, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s71'] = observed(lambda: look(s71, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s72'] = observed(lambda: look(s72, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s73'] = observed(lambda: look(s73, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s74'] = observed(lambda: look(s74, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s75'] = observed(lambda: look(s75, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s76'] = observed(lambda: look(s76, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s77'] = observed(lambda: look(s77, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s78'] = observed(lambda: look(s78, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s79'] = observed(lambda: look(s79, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s80'] = observed(lambda: look(s80, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s81'] = observed(lambda: look(s81, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s82'] = observed(lambda: look(s82, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s83'] = observed(lambda: look(s83, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s84'] = observed(lambda: look(s84, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s85'] = observed(lambda: look(s85, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s86'] = observed(lambda: look(s86, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s87'] = observed(lambda: look(s87, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s88'] = observed(lambda: look(s88, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s89'] = observed(lambda: look(s89, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s90'] = observed(lambda: look(s90, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s91'] = observed(lambda: look(s91, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s92'] = observed(lambda: look(s92, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s93'] = observed(lambda: look(s93, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s94'] = observed(lambda: look(s94, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s95'] = observed(lambda: look(s95, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s96'] = observed(lambda: look(s96, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s97'] = observed(lambda: look(s97, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s98'] = observed(lambda: look(s98, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: s99'] = observed(lambda: look(s99, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: wide'] = observed(lambda: look(wide, 'type', 'dtype', 'device', 'shape', 'values'))
    seen['after writing through the outputs: out[0]'] = observed(lambda: look(out, 'type', 'dtype', 'device', 'shape', 'values'))
    return calls

compiled_f = torch.compile(f, backend='aot_eager', dynamic=True)

# -------------------- how the harness reads and judges each check (torch-conformance's own functions)
def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def output_structure(out):
    if isinstance(out, tuple | list):
        return f"{type(out).__name__}({', '.join((output_structure(x) for x in out))})"
    if isinstance(out, dict):
        return f"dict({', '.join((f'{k}: {output_structure(out[k])}' for k in sorted(out, key=str)))})"
    return '*'

def is_subclass(t):
    return type(t) is not torch.Tensor and hasattr(type(t), '__tensor_flatten__')

def storage_key(t):
    if is_subclass(t) or t.device.type == 'meta':
        return None
    try:
        st = t.untyped_storage()
        return (str(t.device), st.data_ptr()) if st.nbytes() else None
    except (RuntimeError, NotImplementedError):
        return None

def write_through_outputs(outputs):
    errors = []
    with torch.no_grad():
        for o in outputs:
            if not isinstance(o, torch.Tensor):
                errors.append(None)
                continue
            try:
                if o.dtype == torch.bool:
                    o.logical_not_()
                else:
                    o.add_(1)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__)
    return errors

def refusal(exc):
    first = str(exc).split('.')[0]
    return f'raises {type(exc).__name__}: ' + re.sub('\\bOutput \\d+ of \\w+', "A view's output", first)

def look(t, *checks):
    seen = {}
    for check in checks:
        try:
            value = OBSERVE[check](t)
        except Exception as exc:
            value = refusal(exc)
        seen[check] = value.clone() if isinstance(value, torch.Tensor) else value
    return seen

def raised(exc):
    text = f'{type(exc).__name__}: ' + next((s for s in str(exc).splitlines() if s.strip()), '')
    inner = exc.__cause__ or getattr(exc, 'inner_exception', None)
    if isinstance(inner, BaseException) and inner is not exc:
        text += f' (caused by {type(inner).__name__}: {str(inner).strip()})'
    return text

def observed(get):
    try:
        return get()
    except Exception as exc:
        return {'unobservable': raised(exc)}

def short(value, limit=160):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'

def shown(value):
    return short(value.flatten()[:8].tolist() if isinstance(value, torch.Tensor) else value)

def judged(check, compiled, eager):
    try:
        detail = JUDGES[check](compiled, eager, TOL)
    except Exception:
        detail = None if repr(compiled) == repr(eager) else ''
    show = SHOW.get(check, str)
    if detail is not None and any((accepts(show(compiled), show(eager)) for accepts in ALLOWED.get(check, ()))):
        print(f'allowed: {check} is {show(compiled)}, eager gives {show(eager)} (a documented difference)')
        return None
    return detail

def differences(eager, compiled, pass_name=''):
    found = 0
    for k, (e_call, c_call) in enumerate(zip(eager, compiled, strict=False)):
        where_call = pass_name + (f'call {k + 1}: ' if len(eager) > 1 else '')
        for where, checks in e_call.items():
            if where not in c_call:
                continue
            lacking = c_call[where].get('unobservable')
            if lacking is not None and 'unobservable' not in checks:
                found += 1
                print(f'MISMATCH: {where_call}{where}: compiled has none ({lacking}), but eager does')
                continue
            for check, e in checks.items():
                c = c_call[where].get(check)
                detail = judged(check, c, e)
                if detail is not None:
                    found += 1
                    sides = (c, e) if check == 'exception' else (shown(c), shown(e))
                    print(f'MISMATCH: {where_call}{where}: {check} is {sides[0]}, but eager gives {sides[1]}' + (f' ({detail})' if detail else ''))
                    if check == '.grad':
                        break
    return found

def dims(sizes):
    return tuple((d if isinstance(d, int) else re.sub('\\bj\\d+\\b', 'j', str(d)) for d in sizes))

def significant_strides(shape, stride):
    if not (isinstance(shape, tuple) and isinstance(stride, tuple)):
        return stride
    if 0 in shape:
        return ()
    return tuple((None if n == 1 else s for n, s in zip(shape, stride, strict=False)))

def one_raised(actual, expected, tol):
    return None if (actual is None) == (expected is None) else ''

def equal(actual, expected, tol):
    return None if actual == expected else ''

def _identical(actual, expected):
    import torch
    if not (type(actual) is torch.Tensor and type(expected) is torch.Tensor and (actual.layout == expected.layout == torch.strided) and (actual.dtype == expected.dtype) and (actual.shape == expected.shape) and (actual.device == expected.device)):
        return False
    try:
        return bool(torch.equal(actual, expected))
    except (RuntimeError, NotImplementedError):
        return False

def close(actual, expected, tol):
    import torch
    if _identical(actual, expected):
        return None
    rtol, atol = (tol.rtol, tol.atol)
    if (rtol is None) != (atol is None):
        rtol, atol = (rtol or 0.0, atol or 0.0)
    try:
        torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=rtol, atol=atol, equal_nan=True, check_device=False, check_stride=False)
    except AssertionError as exc:
        return '; '.join([ln.strip() for ln in str(exc).splitlines() if ln.strip()][:4])
    return None

def moved(actual, expected, tol):
    return None if (actual > 0) == (expected > 0) else ''

OBSERVE = {  # how one side shows each check of a tensor t (conformance/core/checks.py)
    'type': lambda t: f'{type(t).__module__}.{type(t).__qualname__}',
    'dtype': lambda t: t.dtype,
    'device': lambda t: str(t.device),
    'shape': lambda t: dims(t.shape),
    'stride': lambda t: significant_strides(dims(t.shape), dims(t.stride())),
    'storage_offset': lambda t: t.storage_offset(),
    'requires_grad': lambda t: t.requires_grad,
    'is_leaf': lambda t: t.is_leaf,
    'values': lambda t: t.detach(),
    'storage contents': lambda t: torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage()).detach(),
}
JUDGES = {'exception': one_raised, 'structure': equal, 'number of outputs': equal, 'type': equal, 'dtype': equal, 'device': equal, 'shape': equal, 'stride': equal, 'storage_offset': equal, 'requires_grad': equal, 'is_leaf': equal, 'values': close, 'storage contents': close, 'is the input object': equal, 'shares storage with': equal, 'storage swapped (set_)': equal, '_version moved': moved, 'grad mode': equal, 'inference mode': equal, 'autocast': equal, 'in-place write through outputs': equal}  # the core's judges
ALLOWED, SHOW = {}, {}

class TOL:  # the case's tolerance (None: torch's defaults for the dtype)
    rtol, atol = None, None

eager = run(f, compiled=False)
differs = differences(eager, run(compiled_f, compiled=True))
# the verdict: what it printed, as the exit status
print(f'MISMATCH: {differs} check(s) differ from eager' if differs else 'MATCHES: compiled behaves like eager on every check')
sys.exit(3 if differs else 0)
