"""A reader for Asterisk's configuration format, strict enough to catch what Asterisk would reject
or misread: options outside a section, lines that are neither option nor section, unknown directives."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SECTION = re.compile(r"^\[([^\]]+)\](?:\(([^)]*)\))?$")
_OPTION = re.compile(r"^([A-Za-z0-9_.-]+)\s*(=>|=)\s*(.*)$")


@dataclass
class Section:
    name: str
    options: list[tuple[str, str]] = field(default_factory=list)

    def get(self, key: str) -> str | None:
        values = self.all(key)
        return values[-1] if values else None

    def all(self, key: str) -> list[str]:
        return [v for k, v in self.options if k == key]


@dataclass
class AsteriskConf:
    sections: list[Section]
    includes: list[str]

    def named(self, name: str, type_: str | None = None) -> Section:
        """The section called `name` (of pjsip `type=` `type_` when given); KeyError when absent."""
        for section in self.sections:
            if section.name == name and (type_ is None or section.get("type") == type_):
                return section
        raise KeyError(f"no [{name}]" + (f" of type {type_}" if type_ else ""))

    def of_type(self, type_: str) -> list[Section]:
        return [s for s in self.sections if s.get("type") == type_]


def parse_asterisk(text: str) -> AsteriskConf:
    sections: list[Section] = []
    includes: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(?<!\\);.*$", "", raw).strip()
        if not line:
            continue
        if line.startswith("#"):
            directive, _, argument = line.partition(" ")
            if directive != "#include" or not argument.strip():
                raise ValueError(f"line {number}: unsupported directive {line!r}")
            includes.append(argument.strip().strip('"'))
            continue
        if match := _SECTION.match(line):
            sections.append(Section(match.group(1)))
            continue
        match = _OPTION.match(line)
        if match is None:
            raise ValueError(f"line {number}: neither a section nor an option: {raw!r}")
        if not sections:
            raise ValueError(f"line {number}: option outside any section: {raw!r}")
        sections[-1].options.append((match.group(1), match.group(3).strip().replace("\\;", ";")))
    return AsteriskConf(sections, includes)
