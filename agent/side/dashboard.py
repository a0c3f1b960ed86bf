"""The owner's dashboard: one server-rendered HTML page, charts drawn as inline SVG, nothing from a CDN.

Pure: call records, messages and the unanswered-questions report in, HTML out, the time passed in.
Everything a caller can influence (caller ID, transcripts) is escaped. No script: the page works in any
browser, on a phone screen, and message audio plays with the browser's own player.
"""

from __future__ import annotations

import time
from html import escape

LATENCY_BUCKETS_MS = (250, 500, 750, 1000, 1500, 2000, 3000)
"""Upper edges of the answer-latency histogram's bars; one more bar holds everything slower."""
HOURS = 24

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:12px;color:#222;background:#fafafa}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ddd}
.cards{display:flex;flex-wrap:wrap;gap:8px}.card{background:#fff;border:1px solid #ddd;border-radius:6px;
padding:8px 12px;flex:1 1 120px}.card b{display:block;font-size:1.4em}
.item{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:8px 0}
.meta{color:#666;font-size:.9em}.turn{border-left:3px solid #9bc;padding-left:8px;margin:6px 0}
.declined{border-left-color:#d96}.q{font-weight:600}audio{width:100%;margin-top:4px}
svg{width:100%;height:auto;background:#fff;border:1px solid #ddd;border-radius:6px}
svg text{font-size:11px;fill:#555}svg rect{fill:#4a8ab5}
svg.timeline{border:0;background:none}svg.timeline line{stroke:#b5534a;stroke-width:2}
"""


def render_dashboard(calls: list[dict], messages: list[dict], unanswered: list[dict], now: float) -> str:
    """The page. `calls`: records with their turns (newest first), `messages`: as MessageStore.recent,
    `unanswered`: groups as unanswered.group_by_meaning (most asked first)."""
    turns = [t for c in calls for t in c.get("turns", [])]
    latencies = [t["latencies_ms"]["response_ms"] for t in turns if "response_ms" in t.get("latencies_ms", {})]
    declined = sum(1 for t in turns if t.get("abstained") or t.get("outcome") == "asked again")
    cards = [("calls", len(calls)), ("questions", len(turns)), ("declined or asked again", declined),
             ("messages", len(messages))]
    return "".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>Phone agent</title><style>{_STYLE}</style></head><body>",
        f"<h1>Phone agent</h1><p class='meta'>as of {_time(now)} UTC; {_latest(len(calls))}</p>",
        "<div class='cards'>", *(f"<div class='card'><b>{n}</b>{escape(label)}</div>" for label, n in cards),
        "</div>",
        "<h2>Answer latency</h2><p class='meta'>end of the caller's question to the first answer audio</p>",
        latency_histogram(latencies),
        "<h2>Calls per hour</h2>", calls_per_hour([c["started"] for c in calls], now),
        "<h2 id='messages'>Messages</h2>", _messages(messages),
        "<h2 id='unanswered'>What callers asked that the KB could not answer</h2>", _unanswered(unanswered),
        "<h2 id='calls'>Recent calls</h2>", _calls(calls),
        "</body></html>"])


def _latest(count: int) -> str:
    return {0: "no calls yet", 1: "the latest call"}.get(count, f"the latest {count} calls")


def latency_histogram(latencies_ms: list[float]) -> str:
    edges = [*LATENCY_BUCKETS_MS, float("inf")]
    counts = [0] * len(edges)
    for value in latencies_ms:
        counts[next(i for i, edge in enumerate(edges) if value <= edge)] += 1
    labels = [f"≤{e}" for e in LATENCY_BUCKETS_MS] + [f">{LATENCY_BUCKETS_MS[-1]}"]
    return bar_chart(counts, labels, "ms")


def calls_per_hour(starts: list[float], now: float) -> str:
    """Calls started in each of the last HOURS hours (oldest first)."""
    counts = [0] * HOURS
    for started in starts:
        hours_ago = int((now - started) // 3600)
        if 0 <= hours_ago < HOURS:
            counts[HOURS - 1 - hours_ago] += 1
    labels = [time.strftime("%H", time.gmtime(now - (HOURS - 1 - i) * 3600)) if i % 3 == 0 else ""
              for i in range(HOURS)]
    return bar_chart(counts, labels, "h UTC")


def bar_chart(counts: list[int], labels: list[str], unit: str) -> str:
    """A bar chart as SVG: one bar per count, its value above it and its label below."""
    width, height, top, bottom = 600, 160, 16, 22
    step = width / max(len(counts), 1)
    peak = max(counts, default=0) or 1
    parts = [f"<svg viewBox='0 0 {width} {height}' role='img' aria-label='bar chart ({escape(unit)})'>"]
    for i, (count, label) in enumerate(zip(counts, labels, strict=True)):
        bar = (height - top - bottom) * count / peak
        x = i * step + step * 0.15
        parts.append(f"<rect x='{x:.1f}' y='{height - bottom - bar:.1f}' width='{step * 0.7:.1f}' "
                     f"height='{bar:.1f}'><title>{escape(label)}: {count}</title></rect>")
        if count:
            parts.append(f"<text x='{x:.1f}' y='{height - bottom - bar - 3:.1f}'>{count}</text>")
        parts.append(f"<text x='{x:.1f}' y='{height - 6}'>{escape(label)}</text>")
    parts.append(f"<text x='4' y='12'>{escape(unit)}</text></svg>")
    return "".join(parts)


def _messages(messages: list[dict]) -> str:
    if not messages:
        return "<p class='meta'>No messages.</p>"
    out = []
    for m in messages:
        transcript = m.get("transcript")
        text = escape(transcript) if transcript else "<i>(not transcribed yet)</i>"
        out.append(f"<div class='item'><div class='meta'>{_time(m['started'])} · from {escape(m['caller'])} · "
                   f"to {escape(m['dialed'])} · {m['seconds']} s · ended by {escape(m['ended_by'])}</div>"
                   f"<div>{text}</div><audio controls preload='none' src='{escape(m['audio'])}'></audio></div>")
    return "".join(out)


def _unanswered(groups: list[dict]) -> str:
    if not groups:
        return "<p class='meta'>Nothing unanswered.</p>"
    out = []
    for g in groups:
        variants = "; ".join(escape(v) for v in g["variants"] if v != g["question"])
        also = f"<div class='meta'>also: {variants}</div>" if variants else ""
        out.append(f"<div class='item'><span class='q'>{escape(g['question'])}</span> "
                   f"<span class='meta'>× {g['count']} ({g['declined']} declined, {g['asked_again']} asked again), "
                   f"last {escape(g['last'])}</span>{also}</div>")
    return "".join(out)


def _transport(kind: str | None) -> str:
    """Phone calls are the rule; a WebSocket stream or the browser phone says so."""
    return "" if kind in (None, "sip") else f" ({escape(kind)})"


def _calls(calls: list[dict]) -> str:
    if not calls:
        return "<p class='meta'>No calls yet.</p>"
    out = []
    for c in calls:
        out.append(f"<details class='item'><summary>{_time(c['started'])} · {escape(c['from'] or '')} → "
                   f"{escape(c['to'] or '')}{_transport(c.get('transport'))}"
                   + (f" · taken by {escape(c['instance'])}" if c.get("instance") else "")
                   + f" · {c['duration_s']} s · "
                   f"{escape(c['outcome'] or '')} · "
                   f"{len(c.get('turns', []))} turns"
                   + "".join(f" · {escape(t['mode'])} transfer to {escape(t['to'])}: {escape(t['result'])}"
                             + (f" ({escape(t['joined'])})" if t.get("joined") else "")
                             for t in c.get("transfers", [])) + "</summary>")
        if c.get("recording"):
            out.append(_recording(c))
        for t in c.get("turns", []):
            latency = t.get("latencies_ms", {}).get("response_ms")
            kind = "turn declined" if t.get("abstained") or t.get("outcome") == "asked again" else "turn"
            hearing = t.get("hearing", {})
            said = t.get("answer") or (f"Are you asking about {hearing['topic']}?" if hearing.get("topic") else "")
            out.append(f"<div class='{kind}'><div class='q'>{escape(t.get('transcript') or '')}</div>"
                       + (f"<div class='meta'>first heard as “{escape(hearing['first_heard'])}”; "
                          + ("the larger recogniser heard it again" if hearing.get("heard_again") else
                             "another reading of the same words was chosen") + "</div>"
                          if hearing.get("first_heard") else "")
                       + f"<div>{escape(said)}</div><div class='meta'>{escape(t.get('outcome', ''))}"
                       + (f" · {latency:.0f} ms" if latency is not None else "")
                       + _answerer(hearing)
                       + (f" · {escape(', '.join(t['sources']))}" if t.get("sources") else "") + "</div></div>")
        out.append("</details>")
    return "".join(out)


def _recording(call: dict) -> str:
    """The call's recording, with a timeline under it marking each turn where the file has it (the file starts
    when the record does): caller left, agent right."""
    length = max(float(call.get("duration_s") or 0), 1.0)
    marks = []
    for t in call.get("turns", []):
        at = max(0.0, t["started"] - call["started"])
        x = min(at / length, 1.0) * 600
        label = f"{int(at // 60)}:{at % 60:04.1f} {t.get('transcript') or ''}"
        marks.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='4' y2='20'><title>{escape(label)}</title></line>"
                     f"<text x='{x + 2:.1f}' y='32'>{int(at // 60)}:{int(at % 60):02d}</text>")
    return (f"<audio controls preload='none' src='{escape(call['recording'])}'></audio>"
            f"<svg class='timeline' viewBox='0 0 610 36' role='img' aria-label='turns in the recording'>"
            f"<rect x='0' y='10' width='600' height='4'></rect>{''.join(marks)}</svg>")


def _answerer(hearing: dict) -> str:
    """Who phrased the answer, when an LLM is set up (the KB's own sentences otherwise go unremarked)."""
    answerer, reason = hearing.get("answerer"), hearing.get("llm_reason")
    if answerer == "llm":
        return " · phrased by the LLM" + (f" (stopped: {escape(reason)})" if reason else "")
    if answerer == "llm_rejected":
        return f" · the LLM's phrasing was not used ({escape(reason or 'no reason')}); KB sentences spoken"
    if reason:
        return f" · KB sentences spoken ({escape(reason)})"
    return ""


def _time(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))
