#!/usr/bin/env python3
"""Instruction mix of the hottest loop of each kernel in a SASS listing (nvdisasm -c or
cuobjdump --dump-sass).

The hottest loop is taken to be the backward branch whose body holds the most HMMA (mma.sync), the
innermost of those holding as many (or, without them, the one with the most instructions); in a
wgmma kernel, the loop densest in HGMMA: the K loop, however far nvcc unrolled it, rather than the
persistent tile loop around it, which holds more of them. Prints, per kernel, the loop's instruction count by
opcode, so changes to the generated main loop can be compared without a GPU.

usage: sass-loop-mix.py FILE.sass [KERNEL_SUBSTRING]
"""
import collections
import re
import sys


def functions(lines):
    name, body = None, []
    for line in lines:
        m = re.match(r'\s*(?:\.text\.|Function : )(\S+?):?\s*$', line)
        if m and ('tylo_kernel' in m.group(1)):
            if name:
                yield name, body
            name, body = m.group(1), []
        elif name:
            body.append(line)
    if name:
        yield name, body


def opcode(line):
    m = re.match(r'\s*(?:/\*[0-9a-f]+\*/)?\s*(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Za-z0-9_.]+)?\s', line)
    return m.group(1) if m else None


def hottest_loop(body):
    """The instructions of the backward branch's loop holding the most HMMA or HGMMA."""
    targets = {}  # label or address -> index of the instruction there
    insns = []  # (opcode, text)
    for line in body:
        m = re.match(r'\s*(\.L_x_\d+):', line)
        if m:
            targets[m.group(1)] = len(insns)
            continue
        op = opcode(line)
        if op:
            a = re.match(r'\s*/\*([0-9a-f]+)\*/', line)
            if a:
                targets[int(a.group(1), 16)] = len(insns)
            insns.append((op, line.strip()))
    best = None
    for pos, (op, text) in enumerate(insns):
        if op != 'BRA':
            continue
        # nvdisasm names targets `(.L_x_12)`; cuobjdump gives addresses (0x3540).
        m = re.search(r'`\((\.L_x_\d+)\)|BRA\s+(?:[!U]?P[T0-9]+,\s*)?(0x[0-9a-f]+)', text)
        if not m:
            continue
        target = targets.get(m.group(1)) if m.group(1) else targets.get(int(m.group(2), 16))
        if target is None or target > pos:
            continue
        loop = insns[target:pos + 1]
        tensor = sum(1 for o, _ in loop if o in ('HMMA', 'HGMMA'))
        hgmma = sum(1 for o, _ in loop if o == 'HGMMA')
        # HGMMA per instruction; else the most HMMA, the innermost of equals.
        key = (hgmma / len(loop),) if hgmma else (0, tensor, -len(loop) if tensor else len(loop))
        if best is None or key > best[0]:
            best = (key, loop)
    return best[1] if best else []


def main():
    text = open(sys.argv[1]).read().splitlines()
    want = sys.argv[2] if len(sys.argv) > 2 else ''
    for name, body in functions(text):
        if want not in name:
            continue
        loop = hottest_loop(body)
        mix = collections.Counter(op for op, _ in loop)
        tensor = 'HGMMA' if mix.get('HGMMA', 0) else 'HMMA'
        hmma = mix.get(tensor, 0)
        other = len(loop) - hmma
        short = re.sub(r'^.*tylo_kernel_', '', name)
        short = re.sub(r'E[iP].*$', '', short)
        print(f'{short}: loop of {len(loop)} instructions, {hmma} {tensor}, {other} others'
              + (f' ({other / hmma:.2f} per {tensor})' if hmma else ''))
        print('  ' + ', '.join(f'{op} {n}' for op, n in mix.most_common()))


if __name__ == '__main__':
    main()
