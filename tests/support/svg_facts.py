#!/usr/bin/env python3
"""Parses an SVG file with a real XML parser (xml.etree) and prints, as JSON, what the tests check in
remat's charts and diagrams: the document size, each series (its curves, markers, label and leader line),
reference lines, callouts, ticks, every text element (with its class and, for a text turned by
rotate(-90 x y) about its own anchor, "rotated": -90), counts of elements by class, and the advance and
reverse segments of a schedule diagram ([x1, y1, x2, y2], in document order). A file that is not well-formed XML
exits 1 with the parser's message.

    svg_facts.py FILE.svg
"""
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def local(tag):
    return tag[len(NS):] if tag.startswith(NS) else tag


def classes(element):
    return element.get("class", "").split()


def number(element, name):
    return float(element.get(name))


def text_facts(element):
    return {
        "x": number(element, "x"),
        "y": number(element, "y"),
        "font_size": float(element.get("font-size", "12")),
        "anchor": element.get("text-anchor", "start"),
        "text": "".join(element.itertext()),
    }


def rotation(element):
    """-90 for a text turned by rotate(-90 X Y) about its own anchor, 0 without a transform; anything else is
    reported as it is, for the test to refuse."""
    transform = element.get("transform")
    if transform is None:
        return 0
    parts = transform.replace("rotate(", "").replace(")", "").split()
    if transform.startswith("rotate(") and len(parts) == 3 and \
            float(parts[1]) == number(element, "x") and float(parts[2]) == number(element, "y"):
        return float(parts[0])
    return transform


def points(polyline):
    result = []
    for pair in polyline.get("points").split():
        x, y = pair.split(",")
        result.append([float(x), float(y)])
    return result


def line(element):
    return [number(element, n) for n in ("x1", "y1", "x2", "y2")]


def main():
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except ET.ParseError as error:
        print(f"svg_facts: {sys.argv[1]} is not well-formed XML: {error}", file=sys.stderr)
        return 1
    if local(root.tag) != "svg" or root.tag != NS + "svg":
        print(f"svg_facts: the root element is {root.tag}, not an SVG <svg>", file=sys.stderr)
        return 1
    facts = {
        "width": float(root.get("width")),
        "height": float(root.get("height")),
        "series": [],
        "references": [],
        "callouts": [],
        "ticks": {"x": [], "y": []},
        "classes": {},
        "segments": {"advance": [], "reverse": []},
        "texts": [],
    }
    for element in root.iter():
        for c in classes(element):
            facts["classes"][c] = facts["classes"].get(c, 0) + 1
        kind = classes(element)
        if local(element.tag) == "text":
            facts["texts"].append(dict(text_facts(element), classes=kind, rotated=rotation(element)))
        if local(element.tag) == "line":
            for c in kind:
                if c in facts["segments"]:
                    facts["segments"][c].append(line(element))
        if local(element.tag) == "g" and "series" in kind:
            series = {"name": element.get("data-name"), "curves": [], "markers": [], "off_scale": [], "label": None,
                      "leader": None}
            for child in element.iter():
                k = classes(child)
                if "curve" in k:
                    series["curves"].append(points(child))
                elif "off-scale" in k:  # a triangle at the plot's edge: its tip, and the value it stands for
                    tip = points(child)[0]
                    series["off_scale"].append({"x": tip[0], "y": tip[1], "value": float(child.get("data-value"))})
                elif "marker" in k:
                    series["markers"].append([number(child, "cx"), number(child, "cy")])
                elif "series-label" in k:
                    series["label"] = text_facts(child)
                elif "leader" in k:
                    series["leader"] = line(child)
            facts["series"].append(series)
        elif local(element.tag) == "g" and "reference" in kind:
            reference = {"value": float(element.get("data-value")), "line": None, "label": None}
            for child in element:
                if local(child.tag) == "line":
                    reference["line"] = line(child)
                elif "reference-label" in classes(child):
                    reference["label"] = text_facts(child)
            facts["references"].append(reference)
        elif local(element.tag) == "g" and "callout" in kind:
            callout = {"ring": None, "label": None}
            for child in element:
                if "callout-ring" in classes(child):
                    callout["ring"] = [number(child, "cx"), number(child, "cy")]
                elif "callout-label" in classes(child):
                    callout["label"] = text_facts(child)
            facts["callouts"].append(callout)
        elif local(element.tag) == "g" and "axis" in kind:
            axis = "x" if "x" in kind else "y"
            for child in element:
                if "tick" in classes(child):
                    facts["ticks"][axis].append("".join(child.itertext()))
    json.dump(facts, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
