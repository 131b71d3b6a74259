#!/usr/bin/python3
"""Opens a rocelab report in headless Chromium (Debian's chromium, over the DevTools protocol
with python3-websocket) and checks that it renders: no console error, no exception, no failed
load, every image decoded (naturalWidth > 0), at least --min-images of them.

    check_report.py REPORT.html [--min-images N]
Exit status: 0 ok, 1 a check failed, 77 (meson's skip) when chromium or python3-websocket is
missing."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def stop(proc, profile):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(profile, ignore_errors=True)


def start_chromium(chromium, attempts=2, wait_s=90):
    """Starts headless Chromium with a DevTools port: returns (process, profile dir, port).
    It waits up to wait_s for the port (a loaded 2-core machine can take tens of seconds for a
    first start) and starts it again once if it exits or never opens one; then raises with
    Chromium's exit status and the end of its stderr."""
    why = ""
    for _ in range(attempts):
        profile = tempfile.mkdtemp(prefix="rocelab-chromium-")
        err = open(os.path.join(profile, "stderr.txt"), "w+")
        proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                 "--no-first-run", "--user-data-dir=" + profile,
                                 "--remote-debugging-port=0", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=err)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + wait_s
        while time.time() < deadline and proc.poll() is None:
            if os.path.exists(port_file):
                lines = open(port_file).read().split("\n")
                if len(lines) >= 2 and lines[0].isdigit():
                    err.close()
                    return proc, profile, int(lines[0])
            time.sleep(0.1)
        status = proc.poll()
        err.seek(0)
        tail = err.read()[-1000:].strip()
        err.close()
        why = ("Chromium exited with status %s" % status if status is not None else
               "Chromium opened no DevTools port in %d s" % wait_s) + (
               "; its stderr ends:\n" + tail if tail else "")
        stop(proc, profile)
    raise RuntimeError(why)


def main():
    path = os.path.abspath(sys.argv[1])
    min_images = 1
    if "--min-images" in sys.argv:
        min_images = int(sys.argv[sys.argv.index("--min-images") + 1])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import websocket
    except ImportError:
        websocket = None
    if not chromium or websocket is None:
        print("skip: chromium or python3-websocket not installed (tools/bootstrap)")
        return 77
    try:
        proc, profile, port = start_chromium(chromium)
    except RuntimeError as e:
        print("FAIL: %s" % e)
        return 1
    try:
        import urllib.request
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json" % port))
        page = next(t for t in targets if t["type"] == "page")
        ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        ids = iter(range(1, 1 << 30))
        events = []

        def call(method, **params):
            i = next(ids)
            ws.send(json.dumps({"id": i, "method": method, "params": params}))
            while True:
                m = json.loads(ws.recv())
                if m.get("id") == i:
                    return m.get("result", {})
                events.append(m)

        for domain in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            call(domain)
        call("Page.navigate", url="file://" + path)
        deadline = time.time() + 60
        while time.time() < deadline and not any(e.get("method") == "Page.loadEventFired"
                                                 for e in events):
            events.append(json.loads(ws.recv()))
        res = call("Runtime.evaluate", returnByValue=True, expression=(
            "JSON.stringify({n: document.images.length, ok: Array.from(document.images)"
            ".filter(i => i.complete && i.naturalWidth > 0).length, title: document.title})"))
        info = json.loads(res["result"]["value"])
        errors = []
        for e in events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append("exception: %s" % p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append("log: %s" % p["entry"].get("text"))
            elif m == "Network.loadingFailed":
                errors.append("load failed: %s" % p.get("errorText"))
            elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith(
                    ("file:", "data:")):
                errors.append("network request: %s" % p["request"]["url"])
        ws.close()
    finally:
        stop(proc, profile)
    print("%s: title %r, %d images, %d decoded; %d console/load errors"
          % (path, info["title"], info["n"], info["ok"], len(errors)))
    for e in errors:
        print("  " + e)
    ok = not errors and info["n"] >= min_images and info["ok"] == info["n"]
    print("ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
