#!/usr/bin/env python3
"""One hundred disjoint 10-element slices of an int64 arange(1000) plus one slice [4:44] overlapping the first four (and part of the fifth), each incremented in place under dynamic shapes, end with eager's values in the shared storage, the first slice returned.
On torch 2.15.0+cu132 the compiled call differs from eager at out[0]: is the input object (exit 3; 0 where they agree, 4 without the device).
From cases/mutation_epilogue/upstream/hundred_slices_plus_overlapping_window_mutated.yaml."""
import sys

import torch

def flatten_outputs(out):
    if isinstance(out, dict):
        out = [out[k] for k in sorted(out, key=str)]
    return [x for item in out for x in flatten_outputs(item)] if isinstance(out, tuple | list) else [out]

def f(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide):
    for piece in (s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide):
        piece.add_(1)
    return s0

def run(fn, compiled):
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
    out = fn(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, wide)
    t = flatten_outputs(out)[0]
    tensors = {'base': base, 's0': s0, 's1': s1, 's2': s2, 's3': s3, 's4': s4, 's5': s5, 's6': s6, 's7': s7, 's8': s8, 's9': s9, 's10': s10, 's11': s11, 's12': s12, 's13': s13, 's14': s14, 's15': s15, 's16': s16, 's17': s17, 's18': s18, 's19': s19, 's20': s20, 's21': s21, 's22': s22, 's23': s23, 's24': s24, 's25': s25, 's26': s26, 's27': s27, 's28': s28, 's29': s29, 's30': s30, 's31': s31, 's32': s32, 's33': s33, 's34': s34, 's35': s35, 's36': s36, 's37': s37, 's38': s38, 's39': s39, 's40': s40, 's41': s41, 's42': s42, 's43': s43, 's44': s44, 's45': s45, 's46': s46, 's47': s47, 's48': s48, 's49': s49, 's50': s50, 's51': s51, 's52': s52, 's53': s53, 's54': s54, 's55': s55, 's56': s56, 's57': s57, 's58': s58, 's59': s59, 's60': s60, 's61': s61, 's62': s62, 's63': s63, 's64': s64, 's65': s65, 's66': s66, 's67': s67, 's68': s68, 's69': s69, 's70': s70, 's71': s71, 's72': s72, 's73': s73, 's74': s74, 's75': s75, 's76': s76, 's77': s77, 's78': s78, 's79': s79, 's80': s80, 's81': s81, 's82': s82, 's83': s83, 's84': s84, 's85': s85, 's86': s86, 's87': s87, 's88': s88, 's89': s89, 's90': s90, 's91': s91, 's92': s92, 's93': s93, 's94': s94, 's95': s95, 's96': s96, 's97': s97, 's98': s98, 's99': s99, 'wide': wide}
    tensors.update({f'out[{j}]': o for j, o in enumerate(flatten_outputs(out)[:0])})
    return next((n for n, x in tensors.items() if x is t), None)

compiled_f = torch.compile(f, backend='aot_eager', dynamic=True)
eager = run(f, compiled=False)
compiled = run(compiled_f, compiled=True)
print('eager:   ', eager)
print('compiled:', compiled)
# the verdict: what it printed, as the exit status
same = compiled == eager
print('MATCHES: compiled behaves like eager here' if same else 'MISMATCH: out[0]: is the input object differs from eager')
sys.exit(0 if same else 3)
