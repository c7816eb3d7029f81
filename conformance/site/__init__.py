"""Living documentation: the spec, its Gherkin scenarios and the reports as a static site.

``build_site(["report.json", ...], "site/")`` writes HTML (index and one page per requirement), the same
as Markdown for a repository, and a shields.io endpoint badge per implementation.

- ``_site``: :func:`build_site` and ``rag-conformance docs`` (``docs_main``);
- ``_pages``: what the site is made of: one column per report, one page per requirement;
- ``_gherkin``: the feature files as display values, parsed by pytest-bdd's parser;
- ``_html``, ``_html_parts``, ``_templates``: the two kinds of page, their escaped pieces, the skeleton;
- ``_markdown``: the Markdown twin;
- ``_badge``: the badge JSON.
"""

from ._badge import badge
from ._pages import DocsError
from ._site import Site, build_site, docs_main

__all__ = ["DocsError", "Site", "badge", "build_site", "docs_main"]
