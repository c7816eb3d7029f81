"""The pinned spec's text and where the kit's data files live: the bottom layer.

- ``_pinned``: reads the pinned OpenSpec markdown into requirements and scenarios, and hashes each
  scenario's text (the ``@spec:`` tag a transcription carries).
- ``_paths``: where the features and the pinned spec are, in a checkout or in the installed wheel.
"""
