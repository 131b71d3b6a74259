"""A scenario's explanation: the comment block at the top of its YAML file (rocesim ignores
comments, so the scenario stays one file). Layout:

    # TITLE LINE
    # Shows: sentences ...            <- a section starts with "Word(s):" after "# "
    #   continued lines ...
    # Watch: ...
    # Report: what the plots show ...

Only comments are read here; the scenario itself is rocesim's to parse.
"""
import re

SECTION = re.compile(r"^([A-Z][A-Za-z ]{1,30}):\s*(.*)$")


def read_notes(path):
    """Returns {"title": str, "sections": [(name, text)]} from the file's leading comments."""
    lines = []
    try:
        with open(path) as f:
            for line in f:
                if not line.startswith("#"):
                    break
                text = line[1:].rstrip("\n")
                lines.append(text[1:] if text.startswith(" ") else text)
    except OSError:
        return {"title": "", "sections": []}
    title = lines[0].strip() if lines else ""
    sections = []
    for line in lines[1:]:
        m = SECTION.match(line)
        if m:
            sections.append([m.group(1), m.group(2).strip()])
        elif sections and line.strip():
            sections[-1][1] = (sections[-1][1] + " " + line.strip()).strip()
    return {"title": title, "sections": [tuple(s) for s in sections]}
