"""Minimal DPDK telemetry (v2) client: one SOCK_SEQPACKET connection per process."""

import json
import os
import shutil
import signal
import socket
import subprocess

RUNTIME_DIRS = ("/var/run/dpdk", "/run/dpdk")


def end_process(proc, timeout=15):
    """Ends a DPDK program the bench started: SIGINT (it stops its ports and writes its
    results), its stdin closed if it has one, up to `timeout` s, then SIGKILL. Quiet if it has
    exited already."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    if proc.stdin:
        try:
            proc.stdin.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def remove_runtime_dir(prefix):
    """Removes the EAL runtime directory of file prefix `prefix` (EAL leaves its config and
    fbarray files there, a killed process its sockets too): <RUNTIME_DIRS>/<prefix> as root,
    $XDG_RUNTIME_DIR/dpdk/<prefix> (or /tmp/dpdk/<prefix>) otherwise, as EAL names it. Call it
    once the process using the prefix has exited."""
    bases = RUNTIME_DIRS if os.geteuid() == 0 else (
        os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", "dpdk"),)
    for d in bases:
        shutil.rmtree(os.path.join(d, prefix), ignore_errors=True)


def socket_path(prefix):
    for d in RUNTIME_DIRS:
        p = os.path.join(d, prefix, "dpdk_telemetry.v2")
        if os.path.exists(p):
            return p
    return None


class Telemetry:
    def __init__(self, prefix, timeout=2.0):
        path = socket_path(prefix)
        if path is None:
            raise OSError(f"no telemetry socket for file prefix {prefix}")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(timeout)
        self.s.connect(path)
        info = json.loads(self.s.recv(1 << 16).decode())
        self.max_len = info.get("max_output_len", 16384)

    def cmd(self, c):
        self.s.send(c.encode())
        return json.loads(self.s.recv(self.max_len + 64).decode())

    def ethdev_stats(self, port):
        return self.cmd(f"/ethdev/stats,{port}")["/ethdev/stats"]

    def close(self):
        self.s.close()
