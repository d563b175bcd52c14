"""``clm-policy test --format junit``: JUnit XML, a ``<testsuite>`` per test file and a
``<testcase>`` per case (a test file that cannot be read: one named ``(test file)``). No
timings: the report is reproducible.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from clm_policy.base.termsafe import terminal_safe
from clm_policy.report.results_text import case_lines
from clm_policy.tester.results import CaseResult, RunReport, Verdict

FILE_CASE = "(test file)"

# Characters XML 1.0 cannot carry at all, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _counts(results: list[CaseResult]) -> dict[str, str]:
    def n(verdict: Verdict) -> str:
        return str(sum(r.outcome is verdict for r in results))

    return {
        "tests": str(len(results)),
        "failures": n(Verdict.FAIL),
        "errors": n(Verdict.ERROR),
        "skipped": n(Verdict.SKIP),
    }


def _testcase(parent: ET.Element, r: CaseResult) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": _clean(r.file),
            "name": _clean(r.case if r.case is not None else FILE_CASE),
            "file": _clean(r.file),
            "line": str(r.line),
        },
    )
    if r.outcome is Verdict.FAIL:
        failure = ET.SubElement(case, "failure", {"message": _clean(r.message), "type": "FAIL"})
        failure.text = _clean("\n".join(case_lines(r, verbose=False)[1:]).rstrip("\n") + "\n")
    elif r.outcome is Verdict.ERROR:
        where = str(r.where or r.file)
        error = ET.SubElement(
            case, "error", {"message": _clean(f"{where}: {r.message}"), "type": "ERROR"}
        )
        error.text = _clean(case_lines(r, verbose=False)[0] + "\n")
    elif r.outcome is Verdict.SKIP:
        ET.SubElement(case, "skipped", {"message": _clean(r.message)})


def render(report: RunReport) -> str:
    root = ET.Element("testsuites", {"name": "clm-policy test", **_counts(report.results)})
    by_file: dict[str, list[CaseResult]] = {f: [] for f in report.files}
    for r in report.results:
        by_file.setdefault(r.file, []).append(r)
    for file, results in by_file.items():
        suite = ET.SubElement(
            root, "testsuite", {"name": _clean(file), **_counts(results), "file": _clean(file)}
        )
        for r in results:
            _testcase(suite, r)
    ET.indent(root)
    # what a terminal must not see (bidi overrides, C1 controls) as character references:
    # the same data for an XML reader, nothing for the printer to change
    xml = terminal_safe(ET.tostring(root, "unicode"), form="xml")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml + "\n"
