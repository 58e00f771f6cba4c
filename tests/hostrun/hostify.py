#!/usr/bin/env python3
"""Turns a .cu file that tyloc generated into host C++ for the host-thread harness.

    hostify.py IN.cu OUT.cpp

Three constructs of the generated code are not C++, and only these change:
  - the dynamic shared memory, `extern __shared__ __align__(1024) unsigned char tylo_smem[];`,
    becomes a pointer to the harness's shared memory of the running block;
  - a kernel's `__cluster_dims__(x, y, z)` is dropped from its declaration, and passed to its launch;
  - each launch, `kernel<<<grid, block, bytes, stream>>>(args);`, becomes
    `tylo_host::launch(kernel, grid, block, bytes, stream, args);` (`launch_cluster(kernel,
    dim3(cluster), ...)` for a kernel with clusters).
Every other line is kept as it is, #line directives included. Fails if a launch is missing or
a line holds CUDA syntax it does not know."""
import os
import re
import sys

SHARED = "extern __shared__ __align__(1024) unsigned char tylo_smem[];"
LAUNCH = re.compile(r"^(\s*)(\w+)<<<(.*), (\w+)>>>\((.*)\);$")
CLUSTER = re.compile(r" __cluster_dims__\((\d+), (\d+), (\d+)\)")
KERNEL = re.compile(r"(\w+)\((?!\d)")  # the kernel name: the call that is not __launch_bounds__(N, ...)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: hostify.py IN.cu OUT.cpp")
    source, target = argv[1], argv[2]
    out, kernels, launches, clusters = [], 0, 0, {}
    with open(source) as f:
        for n, line in enumerate(f, 1):
            text = line.rstrip("\n")
            if text.lstrip().startswith("__global__ "):
                kernels += 1
                cluster = CLUSTER.search(text)
                text = CLUSTER.sub("", text)
                name = KERNEL.search(text)
                if cluster and name:
                    clusters[name.group(1)] = ", ".join(cluster.groups())
            if text.strip() == SHARED:
                text = text.replace(SHARED, "unsigned char* const tylo_smem = ::tylo_host::shared_memory();")
            elif "<<<" in text:
                m = LAUNCH.match(text)
                if not m:
                    sys.exit(f"{source}:{n}: a launch hostify.py cannot read: {text.strip()}")
                indent, kernel, config, stream, args = m.groups()
                rest = f", {args}" if args else ""
                if kernel in clusters:
                    text = (f"{indent}::tylo_host::launch_cluster({kernel}, dim3({clusters[kernel]}), {config}, "
                            f"{stream}{rest});")
                else:
                    text = f"{indent}::tylo_host::launch({kernel}, {config}, {stream}{rest});"
                launches += 1
            elif "__shared__" in text:
                sys.exit(f"{source}:{n}: shared memory hostify.py does not know: {text.strip()}")
            out.append(text + "\n")
    if launches != kernels:
        sys.exit(f"{source}: {kernels} kernels but {launches} launches")
    with open(target + ".tmp", "w") as f:
        f.writelines(out)
    os.replace(target + ".tmp", target)


if __name__ == "__main__":
    main(sys.argv)
