#!/usr/bin/env python3
"""Writes random scalar kernels for the differential test of the generated CUDA against the
emulator (tests/hostrun/README.md, "Random kernels").

    random_kernels.py SEED COUNT OUT.tyl OUT.h

The scalar kernels run 2 blocks of 64 threads; every thread computes integer (i32, i64) and float
expressions of its ids, four scalar parameters, earlier values, loop variables and literals
(around the ends of the types too), under random ifs and loops, and stores one result of each
type in the three outputs. Every operator the language has at run time appears: wrapping
arithmetic, divisions and shifts by any value, comparisons, min and max, conversions. COUNT / 2
fragment kernels follow: tiles of M rows (a parameter) in register fragments of several
layouts and float types, fragment arithmetic with scalars and a memory operand, stores with
conversion, rows past M predicated; and COUNT / 2 kernels that stage such a tile in shared memory
(swizzled or not, by cp.async or the block's copy) between the tensors and the fragment. The
output is a function of SEED alone. OUT.h lists the kernels: TYLO_RANDOM_KERNELS(X) calls
X(name) for each."""
import random
import sys

INT_LITERALS = [1, 2, 3, 5, 7, 8, 16, 31, 32, 33, 63, 64, 100, 255, 1000, 46341, 65535, 65536,
                1 << 30, 2147483647]
I64_LITERALS = [4294967296, 4294967295, 1 << 40, 9223372036854775807]
FLOAT_LITERALS = ["0.5", "1.0", "3.0", "0.25", "1e30", "-2.5", "65504.0"]
INT_OPS = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"]
INT_OPS_WEIGHTS = [5, 4, 4, 2, 2, 2, 2, 1, 1, 1]
FLOAT_OPS = ["+", "-", "*", "/"]


class Kernel:
    def __init__(self, rng, name):
        self.rng = rng
        self.name = name
        self.ints = ["a", "c", "thread_id.x", "block_id.x", "lane_id()", "warp_id()", "i"]
        self.wides = ["w"]
        self.floats = ["x"]
        self.mutable = []  # (name, kind)
        self.lines = []
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}{self.count}"

    # An expression that is never a compile-time constant: at least one leaf is a run-time value.
    def int_expr(self, depth):
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return r.choice(self.ints + self.wides if r.random() < 0.3 else self.ints)
        choice = r.random()
        if choice < 0.6:
            op = r.choices(INT_OPS, INT_OPS_WEIGHTS)[0]
            left = self.int_expr(depth - 1)
            right = self.int_operand(depth - 1)
            while op == "%" and right in ("1", "(-1)"):
                right = self.int_operand(depth - 1)  # x % 1 is 0: a later division by it is refused
            if r.random() < 0.5:
                left, right = right, left
                if not self.is_runtime(left):
                    left, right = right, left
            return f"({left} {op} {right})"
        if choice < 0.7:
            return f"(-{self.int_expr(depth - 1)})"
        if choice < 0.8:
            return f"{r.choice(['min', 'max'])}({self.int_expr(depth - 1)}, {self.int_operand(depth - 1)})"
        if choice < 0.88:
            cmp = r.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"({self.int_expr(depth - 1)} {cmp} {self.int_operand(depth - 1)})"
        if choice < 0.94:
            return f"i32({self.any_expr(depth - 1)})"
        return f"i64({self.any_expr(depth - 1)})"

    def is_runtime(self, text):
        return not text.lstrip("(-").split(")")[0].isdigit()

    # Either side of a binary operator: a literal, or a run-time expression.
    def int_operand(self, depth):
        r = self.rng
        if r.random() < 0.4:
            lit = r.choice(INT_LITERALS + I64_LITERALS if r.random() < 0.2 else INT_LITERALS)
            return f"(-{lit})" if r.random() < 0.25 else str(lit)
        return self.int_expr(depth)

    def float_expr(self, depth):
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return r.choice(self.floats)
        choice = r.random()
        if choice < 0.55:
            left = self.float_expr(depth - 1)
            right = r.choice(FLOAT_LITERALS) if r.random() < 0.4 else self.float_expr(depth - 1)
            if r.random() < 0.5:
                left, right = right, left
            return f"({left} {r.choice(FLOAT_OPS)} {right})"
        if choice < 0.7:
            return f"{r.choice(['min', 'max'])}({self.float_expr(depth - 1)}, {self.float_expr(depth - 1)})"
        if choice < 0.8:
            return f"relu({self.float_expr(depth - 1)})"
        if choice < 0.9:
            return f"f32({self.int_expr(depth - 1)})"
        return f"({self.float_expr(depth - 1)} * {self.int_expr(depth - 1)})"

    def any_expr(self, depth):
        return self.float_expr(depth) if self.rng.random() < 0.4 else self.int_expr(depth)

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def statements(self, indent, count, depth):
        r = self.rng
        for _ in range(count):
            kind = r.random()
            if kind < 0.35 or not self.mutable:
                name = self.fresh("v")
                is_float = r.random() < 0.3
                self.emit(indent, f"let {name} = {self.float_expr(3) if is_float else self.int_expr(3)};")
                if indent == 1:
                    (self.floats if is_float else self.ints).append(name)
                elif self.mutable:
                    # A value of an inner block reaches the outputs through a variable.
                    target, t = r.choice(self.mutable)
                    self.emit(indent, f"{target} += {t}({name});")
            elif kind < 0.6:
                name, t = r.choice(self.mutable)
                op = r.choice(["=", "+=", "-=", "*="])
                value = self.float_expr(2) if t == "f32" else self.int_expr(2)
                self.emit(indent, f"{name} {op} {t}({value});")
            elif kind < 0.8 and depth > 0:
                cond = f"{self.int_expr(2)} {r.choice(['<', '>', '==', '!='])} {self.int_operand(1)}"
                if r.random() < 0.3:
                    cond = f"({cond}) && ({self.int_expr(1)} != 0)"
                self.emit(indent, f"if {cond} {{")
                self.statements(indent + 1, r.randint(1, 2), depth - 1)
                if r.random() < 0.5:
                    self.emit(indent, "} else {")
                    self.statements(indent + 1, 1, depth - 1)
                self.emit(indent, "}")
            elif depth > 0:
                var = self.fresh("k")
                shape = r.random()
                if shape < 0.5:
                    bounds = f"0, ({self.int_expr(1)} & 7) + 1"
                elif shape < 0.75:
                    bounds = f"({self.int_expr(1)} & 3), 9, {r.choice([1, 2, 3])}"
                else:
                    bounds = f"2147483640 + (a & 3), 2147483647, {r.choice([2, 3, 5])}"
                self.emit(indent, f"for {var} in range({bounds}) {{")
                self.ints.append(var)
                self.statements(indent + 1, r.randint(1, 2), depth - 1)
                self.ints.remove(var)
                self.emit(indent, "}")

    def text(self):
        r = self.rng
        self.emit(1, "let i = block_id.x * 64 + thread_id.x;")
        for t in ["i32", "i64", "f32"]:
            name = self.fresh("m")
            init = "x" if t == "f32" else ("w" if t == "i64" else "a + i")
            self.emit(1, f"let {name} = {t}({init});")
            self.mutable.append((name, t))
        self.statements(1, r.randint(6, 12), 2)
        (mi, _), (mw, _), (mf, _) = self.mutable
        self.emit(1, f"out32[i] = i32({mi} + {self.int_expr(2)});")
        self.emit(1, f"out64[i] = i64({mw} ^ {self.int_expr(2)});")
        self.emit(1, f"outf[i] = f32({mf} + {self.float_expr(2)});")
        head = (f"kernel {self.name}(a: i32, c: i32, w: i64, x: f32, out32: global i32[128], "
                f"out64: global i64[128], outf: global f32[128]) launch(grid = 2, block = 64) {{")
        return "\n".join([head] + self.lines + ["}"]) + "\n"


# Fragment kernels: tiles of a runtime number of rows M copied from global tensors into register
# fragments of one of these layouts (layout, rows per block, threads per block), combined by
# fragment arithmetic with scalars, conversions and a global memory operand, and stored with
# conversion to the output's type. Rows past M are predicated.
LAYOUTS = [
    ("S[(32, {c}) : (1@laneid, 1)]", 32, 32),
    ("S[(16, 2, {c}) : (2@laneid, 1@laneid, 1)]", 32, 32),      # lanes interleave the rows
    ("S[(8, 4, {c}) : (1@laneid, 8@laneid, 1)]", 32, 32),       # lanes in transposed order
    ("S[(32, {h}, 2) : (1@laneid, 1, {h})]", 32, 32),           # a row's slots not in order
    ("S[(64, {c}) : (1@tx, 1)]", 64, 64),
    ("S[(32, {c}) : (1@laneid, 1)] + R[2 : 1@warpid]", 32, 64),  # both warps hold the tile
]
FLOAT_TYPES = ["f32", "f16", "bf16"]


class FragmentKernel:
    def __init__(self, rng, name):
        self.rng = rng
        self.name = name

    def expr(self, depth, leaves):
        r = self.rng
        if depth <= 0 or r.random() < 0.2:
            return r.choice(leaves)
        choice = r.random()
        if choice < 0.5:
            other = r.choice(["alpha", "beta", "0.5", "2.0", "-1.5"]) if r.random() < 0.4 else self.expr(depth - 1, leaves)
            left, right = self.expr(depth - 1, leaves), other
            if r.random() < 0.5:
                left, right = right, left
            return f"({left} {r.choice(['+', '-', '*', '/'])} {right})"
        if choice < 0.65:
            return f"{r.choice(['min', 'max'])}({self.expr(depth - 1, leaves)}, {self.expr(depth - 1, leaves)})"
        if choice < 0.75:
            return f"relu({self.expr(depth - 1, leaves)})"
        if choice < 0.85:
            return f"(-{self.expr(depth - 1, leaves)})"
        return f"{r.choice(FLOAT_TYPES)}({self.expr(depth - 1, leaves)})"

    def text(self):
        r = self.rng
        layout, rows, block = r.choice(LAYOUTS)
        cols = r.choice([4, 8])
        ta, tb, te, td = (r.choice(FLOAT_TYPES) for _ in range(4))
        tx, ty, tz = (r.choice(FLOAT_TYPES) for _ in range(3))
        lay = layout.format(c=cols, h=cols // 2)
        win = f"((block_id.x * {rows}, 0), ({rows}, {cols}))"
        lines = [
            f"    let x = alloc_local({tx}[{rows}, {cols}], layout = L);",
            f"    copy(x, A.window{win});",
            f"    let y = alloc_local({ty}[{rows}, {cols}], layout = L);",
            f"    copy(y, B.window{win});",
            f"    let z = alloc_local({tz}[{rows}, {cols}], layout = L);",
            f"    z = {self.expr(3, ['x', 'y'])};",
        ]
        if r.random() < 0.5:
            lines.append(f"    z {r.choice(['+=', '-=', '*='])} {self.expr(2, ['x', 'y', 'z'])};")
        memory = f"E.window{win}"
        lines.append(f"    store(D.window{win}, {self.expr(2, ['x', 'y', 'z'])} {r.choice(['+', '*', '-'])} "
                     f"{r.choice(['alpha', 'beta'])} * {memory});")
        head = (f"kernel {self.name}(M: i32, alpha: f32, beta: f32, A: global {ta}[M, {cols}] align 16, "
                f"B: global {tb}[M, {cols}] align 16, E: global {te}[M, {cols}] align 16, "
                f"D: global {td}[M, {cols}] align 16) launch(grid = cdiv(M, {rows}), block = {block}) {{")
        return f"layout L_{self.name} = {lay};\n" + "\n".join([head] + lines).replace("layout = L)", f"layout = L_{self.name})") + "\n}\n"


# Shared-memory kernels: a tile of a global tensor copied into shared memory (cp.async or the
# block's plain copy) in one of these swizzles, (bits, base, shift) by element type and row width,
# which tyloc accepts without a bank-conflict warning for a lane-per-row fragment, read into a
# fragment after the barrier, and stored either through a second shared tile or with the first as
# a memory operand.
SWIZZLES = {
    ("f16", 8): [(3, 2, 3), (3, 3, 3), (3, 3, 5), (3, 4, 4)],
    ("f16", 16): [(3, 2, 3), (3, 3, 3)],
    ("f16", 32): [(3, 2, 3), (3, 3, 3)],
    ("f32", 8): [(2, 2, 3), (2, 3, 3)],
    ("f32", 16): [(2, 2, 3), (2, 3, 3)],
    ("f32", 32): [(2, 3, 3)],
}


class SharedKernel(FragmentKernel):
    def tile_layout(self, t, rows, cols):
        r = self.rng
        if r.random() < 0.3:
            return f"S[({rows}, {cols}) : ({cols}, 1)]"
        b, m, sh = r.choice(SWIZZLES[(t, cols)])
        return f"ComposeLayout({b}, {m}, {sh}, S[({rows}, {cols}) : ({cols}, 1)])"

    def text(self):
        r = self.rng
        layout, rows, block = r.choice(LAYOUTS)
        ts, td = r.choice(["f16", "f32"]), r.choice(["f16", "f32"])
        cols = r.choice([8, 16, 32])
        tx = r.choice(FLOAT_TYPES)
        name = self.name
        win = f"((block_id.x * {rows}, 0), ({rows}, {cols}))"
        lines = [f"    let s = alloc_shared({ts}[{rows}, {cols}], layout = T_{name});"]
        if r.random() < 0.6:
            lines += [f"    copy_async(s, A.window{win});", "    commit_copies();", "    wait_copies(0);"]
        else:
            lines.append(f"    copy(s, A.window{win});")
        lines += ["    barrier();", f"    let x = alloc_local({tx}[{rows}, {cols}], layout = L_{name});",
                  "    copy(x, s);"]
        layouts = [f"layout L_{name} = {layout.format(c=cols, h=cols // 2)};",
                   f"layout T_{name} = {self.tile_layout(ts, rows, cols)};"]
        if r.random() < 0.5:
            layouts.append(f"layout U_{name} = {self.tile_layout(td, rows, cols)};")
            lines += [f"    let u = alloc_shared({td}[{rows}, {cols}], layout = U_{name});",
                      f"    copy(u, {self.expr(2, ['x'])});", "    barrier();", f"    copy(D.window{win}, u);"]
        else:
            lines.append(f"    store(D.window{win}, {self.expr(2, ['x'])} + alpha * s);")
        head = (f"kernel {name}(M: i32, alpha: f32, beta: f32, A: global {ts}[M, {cols}] align 16, "
                f"D: global {td}[M, {cols}] align 16) launch(grid = cdiv(M, {rows}), block = {block}) {{")
        return "\n".join(layouts + [head] + lines + ["}"]) + "\n"


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: random_kernels.py SEED COUNT OUT.tyl OUT.h")
    seed, count = int(argv[1]), int(argv[2])
    rng = random.Random(seed)
    names = [f"random{seed}_{n}" for n in range(count)]
    kernels = [Kernel(rng, name).text() for name in names]
    fragments = [f"fragments{seed}_{n}" for n in range(count // 2)]
    kernels += [FragmentKernel(rng, name).text() for name in fragments]
    names += fragments
    tiles = [f"shared{seed}_{n}" for n in range(count // 2)]
    kernels += [SharedKernel(rng, name).text() for name in tiles]
    names += tiles
    with open(argv[3], "w") as f:
        f.write(f"// Written by tests/hostrun/random_kernels.py {seed} {count}: random scalar kernels.\n")
        f.write("\n".join(kernels))
    stem = argv[3].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    with open(argv[4], "w") as f:
        f.write(f"// Written by tests/hostrun/random_kernels.py {seed} {count}.\n#pragma once\n")
        f.write(f'#include "{stem}.cuh"\n')
        f.write("#define TYLO_RANDOM_KERNELS_%d(X)" % seed + "".join(f" X({n})" for n in names) + "\n")


if __name__ == "__main__":
    main(sys.argv)
