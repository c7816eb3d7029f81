"""The page skeleton and its stylesheet, shipped as code so an installed kit needs no data files.

One inline stylesheet, no script, no external asset: the site opens from a file:// URL, offline, and
reads the same in a CI artifact viewer as on a web server.
"""

from __future__ import annotations

from string import Template

__all__ = ["CSS", "PAGE"]

# Every $name is substituted with text that the caller has already escaped (or built from escaped
# parts); string.Template itself does no escaping.
PAGE = Template(
    """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header class="top"><a href="index.html">$site</a>$crumb</header>
<main>
$body
</main>
<footer>$footer</footer>
</body>
</html>
"""
)

CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-soft: #f6f8fa;
  --ok: #1a7f37; --ok-bg: #dafbe1; --bad: #cf222e; --bad-bg: #ffebe9; --warn: #9a6700;
  --warn-bg: #fff8c5; --na: #59636e; --na-bg: #eff2f5; --link: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); font: 15px/1.5 -apple-system, "Segoe UI", "Noto Sans",
  Helvetica, Arial, sans-serif; background: #fff; }
header.top { padding: 10px 32px; border-bottom: 1px solid var(--line); background: var(--bg-soft);
  font-weight: 600; }
header.top .crumb { color: var(--muted); font-weight: 400; }
main { max-width: 1240px; padding: 8px 32px 32px; }
footer { padding: 12px 32px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--line); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
h1 { font-size: 26px; margin: 16px 0 4px; }
h2 { font-size: 20px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 6px; }
code, pre, .gherkin { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; }
code { background: var(--bg-soft); padding: 1px 4px; border-radius: 4px; }
p.lead { color: var(--muted); margin-top: 0; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
table.matrix td.cell, table.matrix th.col { text-align: center; }
th .sub, td .sub { display: block; color: var(--muted); font-weight: 400; font-size: 12px; }
.tag { display: inline-block; font: 11px/1.6 ui-monospace, Menlo, Consolas, monospace;
  color: var(--muted); background: var(--na-bg); border: 1px solid var(--line); border-radius: 10px;
  padding: 0 7px; margin: 0 3px 3px 0; }
.tag.spec { color: #6639ba; background: #fbefff; border-color: #e6d1f7; }
.tag.derived { color: var(--warn); background: var(--warn-bg); border-color: #eed888; }
.status { display: inline-block; font-weight: 600; font-size: 12px; border-radius: 4px;
  padding: 1px 7px; white-space: nowrap; }
.s-passed, .s-conforms { color: var(--ok); background: var(--ok-bg); }
.s-failed, .s-errored, .s-does-not-conform { color: var(--bad); background: var(--bad-bg); }
.s-xfailed, .s-not_judged, .s-not-judged, .s-blocked { color: var(--warn); background: var(--warn-bg); }
.s-not_applicable, .s-skipped, .s-not-applicable, .s-not-run { color: var(--na); background: var(--na-bg); }
.spec-text { border-left: 4px solid #8250df; background: #fbf8ff; padding: 8px 16px; margin: 8px 0; }
.spec-text h3 { margin-top: 10px; }
.spec-text ul { margin: 4px 0 8px; padding-left: 20px; }
p.prose { color: var(--muted); max-width: 860px; margin: 6px 0; }
.note { color: var(--muted); white-space: pre-wrap; margin: 6px 0; }
.warning { background: var(--warn-bg); border: 1px solid #eed888; padding: 6px 12px; border-radius: 6px; }
article.scenario { border: 1px solid var(--line); border-radius: 8px; margin: 16px 0; padding: 12px 16px; }
article.scenario:target { border-color: var(--link); box-shadow: 0 0 0 2px #ddf4ff; }
.gherkin { background: var(--bg-soft); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.gherkin .line { white-space: pre-wrap; margin: 1px 0; }
.gherkin .kw { font-weight: 700; color: #8250df; }
.gherkin .step { padding-left: 20px; }
.gherkin table { margin: 4px 0 6px 40px; background: #fff; }
.gherkin th, .gherkin td { padding: 2px 8px; }
var { font-style: normal; color: #0550ae; }
pre.message { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; padding: 6px 10px;
  background: var(--bad-bg); border-radius: 6px; max-height: 18em; overflow: auto; }
pre.message.quiet { background: var(--na-bg); }
"""
