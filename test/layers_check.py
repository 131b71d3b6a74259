#!/usr/bin/python3
"""The floors of lib/ hold: every include between libraries follows the declared order.

lib/meson.build lists the libraries in dependency order (`rocesw_libs = [...]`); each
lib/<name>/meson.build names the libraries it uses (`deps = [...]`, and `'deps' : [...]` for the
further libraries of its folder). This check fails when
  - a folder of lib/ is missing from the list, or the list names a folder that does not exist;
  - a library declares a dep listed after it (or itself, or an unknown name);
  - a file of lib/<name> includes "<other>/..." where <other> is a library it does not declare,
    or includes a header of drivers/ or app/.
The build enforces the same (each library compiles against its own include tree and its deps'),
so this check names the offending line before a compiler error would.

Usage: layers_check.py [SOURCE_ROOT]     (default: the repository holding this file)
       layers_check.py --self-test       (shows that an upward include is caught)
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([A-Za-z0-9_]+)/[^">]+[">]')


def lib_order(root):
    text = open(os.path.join(root, 'lib', 'meson.build')).read()
    m = re.search(r'rocesw_libs\s*=\s*\[(.*?)\n\]', text, re.S)
    if not m:
        raise SystemExit('lib/meson.build: no rocesw_libs = [...] list')
    return re.findall(r"^\s*'([a-z_0-9]+)'", m.group(1), re.M)


def declared_deps(root, lib):
    """Names in `deps = [...]`, `deps += [...]` and `'deps' : [...]` of lib/<lib>/meson.build."""
    path = os.path.join(root, 'lib', lib, 'meson.build')
    if not os.path.exists(path):
        return None
    text = re.sub(r'#.*', '', open(path).read())
    names = set()
    for m in re.finditer(r"(?:\bdeps\s*\+?=|'deps'\s*:)\s*\[([^\]]*)\]", text):
        names.update(re.findall(r"'([a-z_0-9]+)'", m.group(1)))
    return names


def extra_lib_names(root, lib):
    """Names of the further libraries a folder declares in `extra_libs = {'name' : {...}}`."""
    path = os.path.join(root, 'lib', lib, 'meson.build')
    if not os.path.exists(path):
        return []
    text = re.sub(r'#.*', '', open(path).read())
    m = re.search(r'extra_libs\s*=\s*\{(.*)\}', text, re.S)
    return re.findall(r"'([a-z_0-9]+)'\s*:\s*\{", m.group(1)) if m else []


def check(root):
    errors = []
    order = lib_order(root)
    rank = {name: i for i, name in enumerate(order)}
    # A folder's extra libraries (roce_host in lib/roce) stand on their folder's floor.
    for lib in order:
        for extra in extra_lib_names(root, lib):
            rank.setdefault(extra, rank[lib])
    lib_dir = os.path.join(root, 'lib')
    folders = {d for d in os.listdir(lib_dir) if os.path.isdir(os.path.join(lib_dir, d))}
    for d in sorted(folders - set(order)):
        errors.append(f'lib/{d}: not listed in lib/meson.build rocesw_libs')
    for d in order:
        if d not in folders:
            errors.append(f'lib/meson.build: lists {d}, but there is no lib/{d}')
    above = set()
    for top in ('drivers', 'app'):
        p = os.path.join(root, top)
        if os.path.isdir(p):
            above.update(d for d in os.listdir(p) if os.path.isdir(os.path.join(p, d)))

    for lib in order:
        deps = declared_deps(root, lib)
        if deps is None:
            continue
        deps.discard(lib)
        for d in sorted(deps):
            if d not in rank:
                errors.append(f'lib/{lib}/meson.build: deps names {d}, which is not a library')
            elif rank[d] > rank[lib]:
                errors.append(f'lib/{lib}/meson.build: deps names {d}, listed after {lib} in '
                              'lib/meson.build')
        for dirpath, _, files in os.walk(os.path.join(lib_dir, lib)):
            for f in sorted(files):
                if not f.endswith(('.h', '.hpp', '.cc', '.cpp')):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, errors='replace') as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if inc == lib:
                            continue
                        if inc in rank:
                            if inc not in deps:
                                where = ('listed after it' if rank[inc] > rank[lib]
                                         else 'not in its deps')
                                errors.append(f'{rel}:{n}: includes {inc}/ ({where}: '
                                              f'lib/{lib}/meson.build deps)')
                        elif inc in above:
                            errors.append(f'{rel}:{n}: includes {inc}/, which is above lib/')
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, 'w').write(text)
        write('lib/meson.build', "rocesw_libs = [\n  'low',  # no deps\n  'high',\n]\n")
        write('lib/low/meson.build', "deps = []\n")
        write('lib/low/a.h', '#include "high/b.h"\n')
        write('lib/high/meson.build', "deps = ['low']\n")
        write('lib/high/b.h', '#include "low/a.h"\n#include "high/c.h"\n')
        errs = check(root)
        assert errs == ['lib/low/a.h:1: includes high/ (listed after it: lib/low/meson.build deps)'], errs
        write('lib/low/a.h', '#include <vector>\n')
        assert check(root) == [], check(root)
        write('lib/low/meson.build', "deps = ['high']\n")
        assert len(check(root)) == 1, check(root)
    print('layers_check self-test: an upward include and an upward dep are caught')
    return 0


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f'{len(errors)} include(s)/dep(s) cross the floors of lib/meson.build')
        return 1
    print(f'layers hold: {len(lib_order(root))} libraries, every include follows its deps')
    return 0


if __name__ == '__main__':
    sys.exit(main())
