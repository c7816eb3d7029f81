"""Living documentation: the spec, its Gherkin scenarios and the reports as a static site.

``build_site(["report.json", ...], "site/")`` writes HTML (index and one page per requirement), the same
as Markdown for a repository, and a shields.io endpoint badge per implementation.
"""

from ._badge import badge
from ._pages import DocsError
from ._site import Site, build_site, docs_main

__all__ = ["DocsError", "Site", "badge", "build_site", "docs_main"]
